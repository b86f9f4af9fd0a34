package engine_test

import (
	stdjson "encoding/json"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
)

// A node's, an attempt's and a run's output that is an empty value ({},
// [], "", 0, false) is kept when the state is encoded, by the value
// model, by encoding/json and by JSON v2 (whose omitempty would drop
// {}, [] and ""), and reads back as itself; no output (nil) is left out,
// as stored states always had it.
func TestEmptyOutputsSurviveTheStatesJSON(t *testing.T) {
	t.Parallel()
	encoders := map[string]func(any) ([]byte, error){
		"jsonvalue": jsonvalue.Marshal, "encoding/json": stdjson.Marshal,
		"json v2": func(v any) ([]byte, error) { return jsonv2.Marshal(v) },
	}
	for _, out := range []any{map[string]any{}, []any{}, "", int64(0), false} {
		for name, enc := range encoders {
			for what, v := range map[string]any{
				"node":    engine.Node{ID: "a", Output: out},
				"attempt": engine.Attempt{Node: "a", Output: out},
				"run":     engine.Run{Input: out, Output: out},
			} {
				b, err := enc(v)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), `"output":`) {
					t.Errorf("%s drops the %s's output %#v: %s", name, what, out, b)
					continue
				}
				var back struct{ Output any }
				if err := jsonvalue.Unmarshal(b, &back); err != nil || back.Output == nil {
					t.Errorf("%s: the %s's output %#v reads back as %#v (%v)", name, what, out, back.Output, err)
				}
			}
		}
	}
	for name, enc := range encoders {
		b, _ := enc(engine.Node{ID: "a"})
		if strings.Contains(string(b), `"output"`) {
			t.Errorf("%s writes a node without output as %s", name, b)
		}
	}
}
