package workers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/testwait"
)

// A tenant's concurrency cap holds however wide its fan-out, and the work
// still completes.
func TestTenantConcurrencyCap(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	running, peak := 0, 0
	b := setup(t, map[string]steps.Handler{"test.count": func(ctx context.Context, _ steps.Call) (any, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		select { // hold the slot long enough for others to try to start
		case <-time.After(30 * time.Millisecond):
		case <-ctx.Done():
		}
		return map[string]any{}, nil
	}})
	if _, err := b.store.TenantSetLimits(b.ctx, b.tenant.ID, 2, 0); err != nil {
		t.Fatal(err)
	}
	b.publishYAML(t, `
key: wide
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, do: {type: task, with: {handler: test.count}}}
`)
	run := b.waitTerminal(t, b.start(t, "wide", map[string]any{"items": items(8)}))
	if run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	if peak > 2 {
		t.Fatalf("%d steps ran at once under a cap of 2", peak)
	}
}

// A tenant's rate limit spaces step starts: at 5/s (a burst of 5), the
// sixth and seventh of seven steps wait for tokens.
func TestTenantRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.TenantSetLimits(b.ctx, b.tenant.ID, 0, 5); err != nil {
		t.Fatal(err)
	}
	b.publishYAML(t, `
key: burst
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, do: {type: task, with: {handler: builtin.noop}}}
`)
	id := b.start(t, "burst", map[string]any{"items": items(7)})
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	attempts, _ := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
	var last time.Time
	started := 0
	for _, a := range attempts {
		if a.Node == "fan" {
			continue
		}
		started++
		if a.StartedAt.After(last) {
			last = a.StartedAt
		}
	}
	if started != 7 {
		t.Fatalf("%d of 7 steps started", started)
	}
	// Burst 5, then 2 more at 5/s: the last cannot start until ~400 ms
	// after the trigger dispatched them all. (Measured from the run's
	// creation, not from the first step's start, which a loaded machine
	// may delay.)
	if wait := last.Sub(run.CreatedAt); wait < 300*time.Millisecond {
		t.Fatalf("the last of 7 steps at 5/s started %s after the trigger; the rate limit did not hold", wait)
	}
}

// The cap also holds for steps the tenant's own workers take through the
// bridge: no more bridge tasks exist at once than the cap allows.
func TestTenantConcurrencyCapHoldsForBridgeTasks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.TenantSetLimits(b.ctx, b.tenant.ID, 2, 0); err != nil {
		t.Fatal(err)
	}
	b.publishYAML(t, `
key: wide-remote
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, do: {type: task, with: {handler: remote.work}}}
`)
	id := b.start(t, "wide-remote", map[string]any{"items": items(6)})
	done, peak := 0, 0
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		var n int
		if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM bridge_task WHERE tenant_id = $1`, b.tenant.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, n)
		tasks, err := b.coord.Runs.Tasks.Poll(b.ctx, b.tenant.ID, runs.TaskPoll{
			Queue: shell.DefaultQueue, Handlers: []string{"remote.work"}, WorkerID: "w", Max: 10,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			if err := b.coord.Runs.Tasks.Complete(b.ctx, b.tenant.ID, task.ID, task.Token, map[string]any{}); err != nil {
				t.Fatal(err)
			}
			done++
		}
		return done >= 6
	}) {
		t.Fatalf("%d of 6 bridge tasks done after 30s", done)
	}
	if run := b.waitTerminal(t, id); run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	if peak > 2 {
		t.Fatalf("%d bridge tasks existed at once under a cap of 2", peak)
	}
}
