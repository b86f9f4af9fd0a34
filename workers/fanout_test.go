package workers_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/workers"
)

func TestScatterConcurrencyBound(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	running, peak := 0, 0
	b := setup(t, map[string]steps.Handler{"test.hold": func(ctx context.Context, _ steps.Call) (any, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
		return map[string]any{}, nil
	}})
	b.publishYAML(t, `
key: bounded
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, concurrency: 2, do: {type: task, with: {handler: test.hold}}}
`)
	if run := b.waitTerminal(t, b.start(t, "bounded", map[string]any{"items": items(8)})); run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	if peak > 2 {
		t.Fatalf("%d children in flight under concurrency 2", peak)
	}
}

func TestScatterIntervalSpacesDispatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: spaced
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, interval_ms: 100, do: {type: task, with: {handler: builtin.noop}}}
`)
	id := b.start(t, "spaced", map[string]any{"items": items(4)})
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	attempts, _ := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
	var starts []time.Time
	for _, a := range attempts {
		if a.Node != "fan" {
			starts = append(starts, a.StartedAt)
		}
	}
	if len(starts) != 4 {
		t.Fatalf("%d children started, want 4", len(starts))
	}
	// The k-th child to start may start no earlier than k intervals after
	// the run was created (a busy machine only makes starts later).
	slices.SortFunc(starts, func(x, y time.Time) int { return x.Compare(y) })
	for k, s := range starts {
		if slot := run.CreatedAt.Add(time.Duration(k) * 100 * time.Millisecond); s.Before(slot) {
			t.Errorf("child %d of 4 at interval_ms 100 started %s after the run was created, before its slot at %s",
				k+1, s.Sub(run.CreatedAt), slot.Sub(run.CreatedAt))
		}
	}
}

func TestScatterHardCap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: huge
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, max_inline_children: 10000, do: {type: transform, with: {expr: item}}}
`)
	run := b.waitTerminal(t, b.start(t, "huge", map[string]any{"items": make([]int, 10001)}))
	if run.Status != engine.RunFailed || run.State.Error == nil || run.State.Error.Code != engine.CodeTooManyChildren {
		t.Fatalf("10,001 items: run %s error %+v, want failed with too_many_children", run.Status, run.State.Error)
	}
	if n := countNodes(t, b, run.ID.String()); n != 1 {
		t.Fatalf("%d nodes exist: a refused scatter must create no children", n)
	}
}

// A tick that dies after writing a 10,000-way scatter's children (before
// committing) is retried: exactly 10,000 children exist and the gather
// runs once.
func TestTenThousandWayScatterSurvivesATickCrash(t *testing.T) {
	t.Parallel()
	var crashed atomic.Bool
	b := setupWith(t, func(c *workers.Config) {
		c.Testing.Fault = func(p string) error {
			if p == shell.FaultAfterSave && crashed.CompareAndSwap(false, true) {
				return errCrash
			}
			return nil
		}
	})
	b.publishYAML(t, `
key: ten-thousand
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, key_expr: 'string(index)', max_inline_children: 10000, do: {type: transform, with: {expr: item}}}
  - ref: collect
    type: gather
    with: {scatter_ref: fan}
edges:
  - {from: fan, to: collect}
`)
	id := b.start(t, "ten-thousand", map[string]any{"items": make([]int, 10000)})
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded || !crashed.Load() {
		t.Fatalf("run %s, crashed %v", run.Status, crashed.Load())
	}
	if n := countNodes(t, b, id.String()); n != 10002 {
		t.Fatalf("%d nodes, want 10,000 children + scatter + gather", n)
	}
	attempts, _ := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
	gathers := 0
	for _, a := range attempts {
		if a.Node == "collect" {
			gathers++
		}
	}
	if gathers != 1 {
		t.Fatalf("the gather ran %d times", gathers)
	}
}

func countNodes(t *testing.T, b testBundle, runID string) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(b.ctx, "SELECT count(*) FROM run_node WHERE run_id = $1", runID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
