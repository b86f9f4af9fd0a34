package workers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// A task of a built-in handler in a deployment where no process has the
// steps role is never fetched: past its schedule_to_start it fails as
// no_worker, naming the handler and the queue, and is retried by its
// policy; its job is cancelled, so nothing runs it later.
func TestLocalTaskWithoutAStepsWorkerFailsNoWorker(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	b := testBundle{ctx: t.Context(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: false})
	b.tenant = testdb.Tenant(t, b.store, nil)
	testdb.Definition(t, b.store, b.tenant.ID, `key: lonely
steps:
  - ref: t
    type: task
    with: {handler: builtin.noop, schedule_to_start: 2s}
    retry: {max_attempts: 2, initial_interval: 10ms}
`)
	started := time.Now()
	id := b.start(t, "lonely", map[string]any{})
	run := b.waitTerminal(t, id)
	nodes := b.nodes(t, id)
	n := nodes["t"]
	if run.Status != engine.RunFailed || n == nil || n.Error == nil || n.Error.Code != shell.CodeNoWorker {
		t.Fatalf("run %s, node %+v: want failed with no_worker", run.Status, n)
	}
	if msg := n.Error.Message; !strings.Contains(msg, `"builtin.noop"`) || !strings.Contains(msg, `"`+shell.QueueStepsStandard+`"`) {
		t.Errorf("message %q names neither the handler nor the queue", msg)
	}
	if n.Attempt != 2 {
		t.Errorf("attempts = %d, want 2 (no_worker is retried)", n.Attempt)
	}
	if took := time.Since(started); took < 4*time.Second {
		t.Errorf("failed after %v, before two attempts' schedule_to_start", took)
	}
	var live int
	if err := pool.QueryRow(b.ctx, `SELECT count(*) FROM river_job WHERE kind = 'ductor.step' AND state NOT IN ('cancelled', 'completed')`).Scan(&live); err != nil || live != 0 {
		t.Errorf("%d step jobs left to run (%v), want none", live, err)
	}
}

// A steps worker that is alive but busy, with a backlog longer than the
// tasks' schedule_to_start, fails none of them: they wait their turn.
func TestBusyStepsWorkerFailsNoTaskAsNoWorker(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	b := testBundle{ctx: t.Context(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: true, maxWorkers: 1}) // 4 workers on the tier's queue
	b.tenant = testdb.Tenant(t, b.store, nil)
	testdb.Definition(t, b.store, b.tenant.ID, `key: busy
steps:
  - ref: t
    type: task
    with: {handler: builtin.sleep, schedule_to_start: 1s, input_expr: '{"ms": 1000}'}
    retry: {max_attempts: 1}
`)
	ids := make([]uuid.UUID, 16)
	for i := range ids {
		ids[i] = b.start(t, "busy", map[string]any{"i": i})
	}
	var longest time.Duration // from start to end of a run: a second of sleep, the rest waiting
	for _, id := range ids {
		run := b.waitTerminal(t, id)
		if run.Status != engine.RunSucceeded {
			t.Errorf("run %s %s: %+v", id, run.Status, run.State.Error)
			continue
		}
		longest = max(longest, b.nodes(t, id)["t"].FinishedAt.Sub(run.CreatedAt))
	}
	// The premise: some task waited past its schedule_to_start (1 s)
	// before its second of sleep began. (The runs are started one after
	// the other, so a loaded machine spreads their waits.)
	if longest-time.Second <= time.Second {
		t.Errorf("the longest run took %v: no task waited past its schedule_to_start", longest)
	}
}

// A tenant on a named tier has its step tasks on its tier's queue class:
// "free", in the bulk class, sends them to the bulk step queue.
func TestNamedTierSendsStepsToItsQueueClass(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	b := testBundle{ctx: t.Context(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: false})
	b.tenant = testdb.Tenant(t, b.store, nil)
	if _, err := b.store.TierEnsure(b.ctx, "free", store.TierBulk); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.TenantSetTier(b.ctx, b.tenant.ID, "free"); err != nil {
		t.Fatal(err)
	}
	testdb.Definition(t, b.store, b.tenant.ID, `key: lonely
steps:
  - ref: t
    type: task
    with: {handler: builtin.noop, schedule_to_start: 1s}
    retry: {max_attempts: 1}
`)
	id := b.start(t, "lonely", map[string]any{})
	b.waitTerminal(t, id)
	n := b.nodes(t, id)["t"]
	if n == nil || n.Error == nil || !strings.Contains(n.Error.Message, `"`+shell.QueueStepsBulk+`"`) {
		t.Fatalf("node %+v: want no_worker on the bulk queue", n)
	}
}
