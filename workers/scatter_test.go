package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/testdb"
)

// publishYAML compiles a YAML document and publishes it.
func (b testBundle) publishYAML(t *testing.T, doc string) {
	t.Helper()
	testdb.Definition(t, b.store, b.tenant.ID, doc)
}

func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"n": i}
	}
	return out
}

func TestInlineScatterAndGatherStrategies(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]steps.Handler{"test.odd_fails": func(_ context.Context, c steps.Call) (any, error) {
		n := int(c.Input.(map[string]any)["n"].(int64))
		if n%2 == 1 {
			return nil, steps.Permanent(fmt.Errorf("odd %d", n))
		}
		return map[string]any{"n": n}, nil
	}})
	for _, strategy := range []string{"partition", "include", "drop", "raise"} {
		b.publishYAML(t, fmt.Sprintf(`
key: gather-%[1]s
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: input.items
      key_expr: '"k" + string(index)'
      concurrency: 3
      do: {type: task, with: {handler: test.odd_fails, input_expr: item}, retry: {max_attempts: 1}}
  - ref: collect
    type: gather
    with: {scatter_ref: fan, strategy: %[1]s}
edges:
  - {from: fan, to: collect}
`, strategy))
		run := b.waitTerminal(t, b.start(t, "gather-"+strategy, map[string]any{"items": items(6)}))
		nodes, _ := b.store.RunNodesByName(b.ctx, b.tenant.ID, run.ID, []string{"collect"})
		out, _ := json.Marshal(nodes[0].Output)
		t.Logf("%s: run %s, gather %s", strategy, run.Status, out)
		switch strategy {
		case "raise":
			if run.Status != engine.RunFailed {
				t.Errorf("raise: run %s, want failed", run.Status)
			}
		default:
			var g struct {
				Result []any          `json:"result"`
				Error  map[string]any `json:"error"`
			}
			_ = json.Unmarshal(out, &g)
			wantResult, wantErrors := map[string]int{"partition": 3, "include": 6, "drop": 3}[strategy], map[string]int{"partition": 3, "include": 3, "drop": 0}[strategy]
			if run.Status != engine.RunSucceeded || len(g.Result) != wantResult || len(g.Error) != wantErrors {
				t.Errorf("%s: run %s, %d results and %d errors, want %d and %d", strategy, run.Status, len(g.Result), len(g.Error), wantResult, wantErrors)
			}
			if wantErrors > 0 && g.Error["k1"] == nil {
				t.Errorf("%s: errors are not keyed by child key: %v", strategy, g.Error)
			}
		}
	}
}

func TestScatterInlineCap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: capped
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: input.items
      do: {type: task, with: {handler: builtin.noop}}
`)
	run := b.waitTerminal(t, b.start(t, "capped", map[string]any{"items": items(257)}))
	if run.Status != engine.RunFailed || run.State.Error == nil || !strings.Contains(run.State.Error.Message+fmt.Sprint(run.State.Error), "256") {
		t.Fatalf("257 items with the default cap: run %s error %+v, want failed naming the limit 256", run.Status, run.State.Error)
	}
	run = b.waitTerminal(t, b.start(t, "capped", map[string]any{"items": items(256)}))
	if run.Status != engine.RunSucceeded {
		t.Fatalf("256 items: run %s", run.Status)
	}
}

func TestForEach(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: each
steps:
  - ref: shout
    type: transform
    for_each: input.words
    with: {expr: 'item + "!"'}
`)
	run := b.waitTerminal(t, b.start(t, "each", map[string]any{"words": []any{"a", "b", "c"}}))
	out, _ := json.Marshal(run.State.Output)
	if run.Status != engine.RunSucceeded || !strings.Contains(string(out), `"result":["a!","b!","c!"]`) {
		t.Fatalf("for_each: run %s output %s", run.Status, out)
	}
}
