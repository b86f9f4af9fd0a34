package api_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testdb"
)

// A node's started_at is when its attempt started on a worker, not when
// the tick dispatched it: scatter children spaced by interval_ms show
// their own starts, and each attempt names its start, end and worker.
func TestNodeStartedAtIsTheWorkersStart(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx, stop := context.WithCancel(context.Background())
	swept := make(chan struct{})
	go func() { defer close(swept); b.runs.Sweep(ctx) }() // delayed dispatches go out through the sweep
	t.Cleanup(func() { stop(); <-swept })
	testdb.Definition(t, b.store, b.tenantA.ID, `
key: spaced
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, interval_ms: 150, do: {type: task, with: {handler: builtin.noop}}}
`)
	code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "spaced", "input": {"items": [1, 2, 3]}}`)
	if code != 201 {
		t.Fatalf("start = %d %v", code, body)
	}
	id := body["id"].(string)
	run := b.waitStatus(t, id)
	created, _ := time.Parse(time.RFC3339Nano, run["created_at"].(string))
	_, page := b.call(t, "GET", "/api/v1/runs/"+id+"/nodes/fan/children", b.keyA, "")
	children, _ := page["children"].([]any)
	if len(children) != 3 {
		t.Fatalf("children %v", page)
	}
	var starts []time.Time
	for _, c := range children {
		child := c.(map[string]any)
		attempts, _ := child["attempts"].([]any)
		if len(attempts) != 1 {
			t.Fatalf("child %v: want one attempt", child)
		}
		a := attempts[0].(map[string]any)
		if a["started_at"] != child["started_at"] || a["finished_at"] == nil || a["worker"] == "" || a["worker"] == nil {
			t.Errorf("child %s started_at %v, attempt %v: want the attempt's start and its worker", child["node"], child["started_at"], a)
		}
		s, _ := time.Parse(time.RFC3339Nano, child["started_at"].(string))
		starts = append(starts, s)
	}
	slices.SortFunc(starts, func(x, y time.Time) int { return x.Compare(y) })
	for k, s := range starts {
		if slot := created.Add(time.Duration(k) * 150 * time.Millisecond); s.Before(slot) {
			t.Errorf("child %d shows started_at %s after the run was created, before its slot at %s", k+1, s.Sub(created), slot.Sub(created))
		}
	}
}
