package expr

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/jsonvalue"
)

func newTestEnv(t testing.TB, opts ...Option) *Env {
	t.Helper()
	env, err := NewEnv(opts...)
	if err != nil {
		t.Fatalf("NewEnv: %v", err)
	}
	return env
}

// decode parses JSON the way the engine receives it.
func decode(t testing.TB, s string) any {
	t.Helper()
	v, err := jsonvalue.Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// decodeNumbers parses JSON keeping numbers as json.Number.
func decodeNumbers(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func testVars(t testing.TB) Vars {
	return Vars{
		Input: decode(t, `{"amount": 5, "price": 2.5, "tier": "gold", "lines": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 1}], "nothing": null}`),
		Steps: map[string]any{
			"charge": map[string]any{"output": decode(t, `{"id": "ch_1", "ok": true}`), "state": "succeeded", "error": nil},
		},
		Run:   map[string]any{"id": "r1", "key": "orders", "version": 3, "depth": 0},
		Now:   testNow,
		Item:  decode(t, `{"sku": "a", "qty": 2}`),
		Index: 4,
		Key:   "a",
		Event: decode(t, `{"name": "paid", "data": {"order": "o1"}}`),
	}
}

func TestEval(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	vars := testVars(t)
	tests := []struct {
		name string
		src  string
		kind Kind
		want any
	}{
		{"int input against int literal", "input.amount > 0", KindBool, true},
		{"int input equals int literal", "input.amount == 5", KindBool, true},
		{"double against int", "input.price < 3", KindBool, true},
		{"int arithmetic", "input.amount + 1", KindAny, int64(6)},
		{"double arithmetic", "input.amount * 2.0", KindAny, float64(10)},
		{"string", `input.tier + "!"`, KindString, "gold!"},
		{"list macro", "input.lines.map(l, l.sku)", KindList, []any{"a", "b"}},
		{"list filter", "input.lines.filter(l, l.qty > 1).size()", KindAny, int64(1)},
		{"map literal", `{"ok": input.amount > 0, "n": 1}`, KindMap, map[string]any{"ok": true, "n": int64(1)}},
		{"null field", "input.nothing == null", KindBool, true},
		{"has macro", "has(input.missing)", KindBool, false},
		{"steps output", "steps.charge.output.id", KindAny, "ch_1"},
		{"steps state", `steps.charge.state == "succeeded"`, KindBool, true},
		{"run fields", `run.key + ":" + string(run.version)`, KindString, "orders:3"},
		{"now", "now", KindTimestamp, testNow},
		{"now arithmetic", `now + duration("1h")`, KindTimestamp, testNow.Add(time.Hour)},
		{"timestamp literal", `timestamp("2025-01-02T03:04:05Z")`, KindTimestamp, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"now hours are UTC", "now.getHours()", KindAny, int64(12)},
		{"item", "item.qty", KindAny, int64(2)},
		{"index", "index + 1", KindAny, int64(5)},
		{"key", "key", KindString, "a"},
		{"event", `event.name == "paid" && event.data.order == "o1"`, KindBool, true},
		{"duration result", `duration("90s")`, KindAny, "90s"},
		{"bytes result", `b"abc"`, KindAny, "YWJj"},
		{"uint result", "7u", KindAny, int64(7)},
		{"int keys", "{1: true}", KindMap, map[string]any{"1": true}},
		{"optional present", "optional.of(1)", KindAny, int64(1)},
		{"optional absent", "input.?missing", KindAny, nil},
		{"strings ext", `"a,b".split(",")`, KindList, []any{"a", "b"}},
		{"math ext", "math.greatest(1, 2)", KindAny, int64(2)},
		{"null result", "null", KindAny, nil},
		{"type result", "type(1)", KindAny, "int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := env.Compile(tt.src, tt.kind)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.src, err)
			}
			got, err := p.Eval(context.Background(), vars)
			if err != nil {
				t.Fatalf("Eval(%q): %v", tt.src, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Eval(%q) = %#v, want %#v", tt.src, got, tt.want)
			}
		})
	}
}

func TestEvalJSONNumber(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	in := decodeNumbers(t, `{"n": 5, "f": 1.5, "xs": [1, 2.5], "deep": {"m": [{"v": 7}]}}`)
	tests := []struct {
		src  string
		want any
	}{
		{"input.n > 0", true},
		{"input.n + 1", int64(6)},
		{"input.f > 1", true},
		{"input.xs[1] * 2.0", float64(5)},
		{"input.deep.m[0].v == 7", true},
		{"input.deep.m[0].v", int64(7)},
	}
	for _, tt := range tests {
		p, err := env.Compile(tt.src, KindAny)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.src, err)
		}
		got, err := p.Eval(context.Background(), Vars{Input: in})
		if err != nil {
			t.Fatalf("Eval(%q): %v", tt.src, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Eval(%q) = %#v, want %#v", tt.src, got, tt.want)
		}
	}
}

func TestEvalBool(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	vars := testVars(t)
	p, err := env.Compile("input.amount > 0", KindBool)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := p.EvalBool(context.Background(), vars)
	if err != nil || !ok {
		t.Fatalf("EvalBool = %v, %v; want true, nil", ok, err)
	}
	p, err = env.Compile("input.tier", KindAny)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.EvalBool(context.Background(), vars); !errors.Is(err, ErrResultType) {
		t.Fatalf("EvalBool on a string: err = %v, want ErrResultType", err)
	}
}

func TestEvalTime(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	p, err := env.Compile(`now + duration("30m")`, KindTimestamp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.EvalTime(context.Background(), Vars{Now: testNow})
	if err != nil || !got.Equal(testNow.Add(30*time.Minute)) {
		t.Fatalf("EvalTime = %v, %v", got, err)
	}
}
