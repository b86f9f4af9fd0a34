package workers_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// batchSize is how many steps the largest step job named by the run
// carries, in the given states.
func batchSize(t *testing.T, b testBundle, runID uuid.UUID, states ...string) int {
	t.Helper()
	var n int
	err := b.pool.QueryRow(b.ctx, `SELECT coalesce(max(1 + coalesce(jsonb_array_length(args->'more'), 0)), 0)
		FROM river_job WHERE kind = 'ductor.step' AND args->>'run_id' = $1 AND state::text = ANY($2)`,
		runID.String(), states).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const threeAtOnce = `
key: three
steps:
  - {ref: a, type: task, with: {handler: test.count}}
  - {ref: b, type: task, with: {handler: test.count}}
  - {ref: c, type: task, with: {handler: test.count}}
`

// Steps dispatched together share one River job, and a run cancelled
// while that job waits in its queue never runs any of them: River does
// not cancel the job (it could carry other runs' steps), but each attempt
// has its result before the worker comes, which then refuses it.
func TestBatchedStepsCancelledWhileQueuedNeverRun(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	count := map[string]steps.Handler{"test.count": func(context.Context, steps.Call) (any, error) {
		ran.Add(1)
		return nil, nil
	}}
	pool := testdb.Schema(t)
	b := testBundle{ctx: t.Context(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: false, handlers: []map[string]steps.Handler{count},
		config: func(c *workers.Config) { c.StepBatchMax = 4 }}) // three steps in one job
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, threeAtOnce)
	id := b.start(t, "three", nil)
	b.poll(t, func() bool { return batchSize(t, b, id, "available") == 3 })

	if err := b.coord.Runs.Control(b.ctx, b.tenant.ID, id, engine.Cancel{RequestID: "c1", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if run := b.waitTerminal(t, id); run.Status != engine.RunCancelled {
		t.Fatalf("run %s, want cancelled", run.Status)
	}
	startWith(t, pool, roles{steps: true, handlers: []map[string]steps.Handler{count}}) // the queue's worker comes
	b.poll(t, func() bool { return batchSize(t, b, id, "completed") == 3 })
	if n := ran.Load(); n != 0 {
		t.Fatalf("%d cancelled steps ran", n)
	}
}

// Cancelling one step of a batch while it runs ends that step alone,
// whether it is the step the job is named by or another: the step running
// beside it in the same job goes on and succeeds.
func TestCancellingABatchedStepLeavesTheOthersRunning(t *testing.T) {
	t.Parallel()
	for _, which := range []string{"first", "other"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			cancelOneOfABatch(t, which == "first")
		})
	}
}

func cancelOneOfABatch(t *testing.T, first bool) {
	started := make(chan string, 2)
	release := make(chan struct{})
	var mu sync.Mutex
	ended := map[string]bool{} // by node: its context ended
	endedCh := make(chan string, 2)
	b := setup(t, map[string]steps.Handler{
		"test.hold": func(ctx context.Context, c steps.Call) (any, error) {
			started <- c.Node
			select {
			case <-release:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				mu.Lock()
				ended[c.Node] = true
				mu.Unlock()
				endedCh <- c.Node
				return nil, ctx.Err()
			}
			return map[string]any{"held": true}, nil
		},
	})
	b.publishYAML(t, `
key: pair
steps:
  - {ref: p, type: task, on_error: continue, with: {handler: test.hold}}
  - {ref: q, type: task, on_error: continue, with: {handler: test.hold}}
`)
	id := b.start(t, "pair", nil)
	<-started
	<-started
	var head string
	if err := b.pool.QueryRow(b.ctx, `SELECT args->>'node' FROM river_job WHERE kind = 'ductor.step' AND state = 'running'
		AND args->>'run_id' = $1 AND jsonb_array_length(args->'more') = 1`, id.String()).Scan(&head); err != nil {
		t.Fatalf("the two steps do not run in one job of two: %v", err)
	}
	victim, other := head, map[string]string{"p": "q", "q": "p"}[head]
	if !first {
		victim, other = other, victim
	}
	if err := b.coord.Runs.CancelNode(b.ctx, b.tenant.ID, id, victim, "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-endedCh:
		if n != victim {
			t.Fatalf("%s was cancelled, not %s", n, victim)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the cancelled step %s still runs after 10s", victim)
	}
	close(release)
	b.waitTerminal(t, id)
	nodes := b.nodes(t, id)
	mu.Lock()
	defer mu.Unlock()
	if ended[other] || nodes[other].State != engine.NodeSucceeded || nodes[victim].State != engine.NodeCancelled {
		t.Fatalf("%s %s (its context ended: %v), %s %s: want the one cancelled, the other succeeded",
			other, nodes[other].State, ended[other], victim, nodes[victim].State)
	}
}

// A worker that dies with a step batch in hand leaves each of its steps to
// the sweep: one whose start it recorded is reported lost when its lease
// runs out, the others, never started, when the job runs past the rescue
// window; each is retried and the run succeeds.
func TestBatchLostWithItsWorkerIsRetriedStepByStep(t *testing.T) {
	t.Parallel()
	count := map[string]steps.Handler{"test.count": func(context.Context, steps.Call) (any, error) { return nil, nil }}
	pool := testdb.Schema(t)
	b := testBundle{ctx: t.Context(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: false, handlers: []map[string]steps.Handler{count}, config: func(c *workers.Config) {
		c.StepBatchMax = 4 // three steps in one job
		c.RescueWindow = 200 * time.Millisecond
	}})
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, threeAtOnce)
	id := b.start(t, "three", nil)
	b.poll(t, func() bool { return batchSize(t, b, id, "available") == 3 })
	// The dead worker fetched the job and recorded the start of b only.
	if _, err := pool.Exec(b.ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now()
		WHERE kind = 'ductor.step' AND args->>'run_id' = $1`, id.String()); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.store.AttemptStart(b.ctx, b.tenant.ID, id, "b", 0, 1, 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("take attempt: %v %v", ok, err)
	}
	startWith(t, pool, roles{steps: true, handlers: []map[string]steps.Handler{count}})
	if run := b.waitTerminal(t, id); run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	attempts, err := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	lost := map[string]bool{}
	for _, a := range attempts {
		if a.Attempt.Attempt == 1 && a.Error != nil && a.Error.Code == "worker_lost" {
			lost[a.Attempt.Node] = true
		}
	}
	if len(attempts) != 6 || len(lost) != 3 {
		t.Fatalf("attempts = %+v, want each of a, b and c lost once then successful", attempts)
	}
}

// A step batch that waited past its schedule_to_start with no worker for
// its queue fails every step it carries as no_worker, not only the one
// its job is named by.
func TestBatchWithoutAStepsWorkerFailsEachStepNoWorker(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	b := testBundle{ctx: t.Context(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: false,
		config: func(c *workers.Config) { c.StepBatchMax = 4 }}) // three steps in one job
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, `
key: lonely-pair
steps:
  - {ref: x, type: task, on_error: continue, retry: {max_attempts: 1}, with: {handler: builtin.noop, schedule_to_start: 1s}}
  - {ref: y, type: task, on_error: continue, retry: {max_attempts: 1}, with: {handler: builtin.noop, schedule_to_start: 1s}}
`)
	id := b.start(t, "lonely-pair", map[string]any{})
	b.poll(t, func() bool { return batchSize(t, b, id, "available", "cancelled") == 2 })
	b.waitTerminal(t, id)
	for ref, n := range b.nodes(t, id) {
		if n.Error == nil || n.Error.Code != shell.CodeNoWorker {
			t.Errorf("node %s: %s %+v, want failed with no_worker", ref, n.State, n.Error)
		}
	}
}

// A tenant's max_concurrency counts steps, not jobs: two steps admitted
// together share a job, and while they run no third is admitted.
func TestTenantConcurrencyCapCountsEveryStepOfABatch(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	running, peak := 0, 0
	b := setup(t, map[string]steps.Handler{"test.count": func(ctx context.Context, _ steps.Call) (any, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		select { // long enough for the sweep to offer the held-back steps again twice
		case <-time.After(600 * time.Millisecond):
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
	id := b.start(t, "wide", map[string]any{"items": items(4)})
	if run := b.waitTerminal(t, id); run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	if n := batchSize(t, b, id, "completed"); n != 2 {
		t.Fatalf("the largest job carried %d steps, want the 2 admitted together", n)
	}
	if peak > 2 {
		t.Fatalf("%d steps ran at once under a cap of 2", peak)
	}
}

// The queue depth counts steps, every step a batch carries.
func TestQueueDepthCountsEveryStepOfABatch(t *testing.T) {
	t.Parallel()
	count := map[string]steps.Handler{"test.count": func(context.Context, steps.Call) (any, error) { return nil, nil }}
	pool := testdb.Schema(t)
	b := testBundle{ctx: t.Context(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: false, handlers: []map[string]steps.Handler{count},
		config: func(c *workers.Config) { c.StepBatchMax = 4 }}) // three steps in one job
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, threeAtOnce)
	id := b.start(t, "three", nil)
	b.poll(t, func() bool { return batchSize(t, b, id, "available") == 3 })
	reg := prometheus.NewRegistry()
	reg.MustRegister(b.coord.Collectors()...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	depth := -1.0
	for _, f := range families {
		if f.GetName() != "ductor_queue_depth" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant_id" && l.GetValue() == b.tenant.ID.String() {
					depth = m.GetGauge().GetValue()
				}
			}
		}
	}
	if depth != 3 {
		t.Fatalf("queue depth %v for the tenant, want its 3 steps", depth)
	}
}
