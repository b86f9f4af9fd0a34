package checker

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// The workload's definitions: each exercises one way runs move, and the
// driver acts on it from outside while worker processes tick it.
var definitions = []string{`
key: chk-scatter
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, max_inline_children: 1000, do: {type: task, timeout: 60s, with: {handler: checker.step, input_expr: item}}}
  - {ref: count, type: transform, with: {expr: 'size(steps.fan.output)'}}
edges: [{from: fan, to: count}]
`, `
key: chk-leaf
steps:
  - {ref: work, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
`, `
key: chk-fanout
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, mode: child_workflow, workflow: chk-leaf, input_expr: item}
  - {ref: collect, type: gather, with: {scatter_ref: fan}}
edges: [{from: fan, to: collect}]
`, `
key: chk-chain
steps:
  - {ref: a, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: b, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: c, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: d, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
edges: [{from: a, to: b}, {from: b, to: c}, {from: c, to: d}]
`, `
key: chk-retry
steps:
  - ref: flaky
    type: task
    timeout: 60s
    retry: {max_attempts: 3, initial_interval: 10ms}
    with: {handler: checker.step, input_expr: '{"fail_attempts": 1}'}
`, `
key: chk-signals
steps:
  - {ref: a, type: signal, with: {name: a}}
  - {ref: b, type: signal, with: {name: b}}
  - {ref: c, type: signal, with: {name: c}}
  - {ref: after, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
edges: [{from: a, to: b}, {from: b, to: c}, {from: c, to: after}]
`, `
key: chk-cancel
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, do: {type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 3000}'}}}
`, `
key: chk-flow
concurrency: [{key_expr: input.key, limit: 1}]
steps:
  - ref: call
    type: task
    timeout: 60s
    concurrency: {key_expr: '"chk-pool"', limit: 1}
    with: {handler: checker.step, input_expr: '{"ms": 15, "flow_key": "chk-pool"}'}
`, `
key: chk-can
steps:
  - {ref: slow, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 1500}'}}
  - {ref: go, type: signal, with: {name: go}}
edges: [{from: slow, to: go}]
`, upgradeV1}

// chk-upgrade's runs start on version 1 and are upgraded to version 2
// while their steps run and their ticks commit: version 2 changes a
// step's settings and adds a step after the signal.
const upgradeV1 = `
key: chk-upgrade
steps:
  - {ref: a, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: b, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: c, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: gate, type: signal, with: {name: go}}
edges: [{from: a, to: b}, {from: b, to: c}, {from: c, to: gate}]
`

const upgradeV2 = `
key: chk-upgrade
steps:
  - {ref: a, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: b, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: c, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 1}'}}
  - {ref: gate, type: signal, with: {name: go}}
  - {ref: after, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
edges: [{from: a, to: b}, {from: b, to: c}, {from: c, to: gate}, {from: gate, to: after}]
`

// Publish publishes the workload's definitions for the tenant.
func Publish(t testing.TB, s *store.Store, tenantID uuid.UUID) {
	t.Helper()
	for _, doc := range definitions {
		testdb.Definition(t, s, tenantID, doc)
	}
	testdb.Definition(t, s, tenantID, upgradeV2)
}

// Prepare makes a schema ready for workers: StepHandler's table, and the
// trigger recording runs' spans (spans.go).
func Prepare(ctx context.Context, db *pgxpool.Pool) error {
	for _, ddl := range []string{executionTable, spanTable} {
		if _, err := db.Exec(ctx, ddl); err != nil {
			return err
		}
	}
	return nil
}

// Workload drives runs of the definitions through a coordinator that
// only inserts jobs (the worker processes work them): triggers, signals
// (each also sent again with the same request id), cancels and
// ContinueAsNew, concurrently with the runs' own progress. It remembers
// every acknowledged trigger and what it should end as.
type Workload struct {
	C      *workers.Runtime
	DB     *pgxpool.Pool
	Tenant uuid.UUID
	// Scatter is the inline scatter's width (default 60); Fanout the
	// child_workflow scatter's (default 6).
	Scatter, Fanout int
	// OnlyUpgrades makes a round start only the run it upgrades, and
	// send that run's signal while the upgrade is under way rather than
	// after it, so that a tick commits inside the upgrade (the unguarded
	// upgrade's test: a run may then end on version 1).
	OnlyUpgrades bool

	mu     sync.Mutex
	runs   []started
	errors []string
}

type started struct {
	id   uuid.UUID
	kind string
}

// Round starts one run of each definition and acts on them, then waits
// (at most a minute) until they have ended, so that rounds keep a steady
// load rather than one burst.
func (w *Workload) Round(ctx context.Context, round int) {
	w.mu.Lock()
	from := len(w.runs)
	w.mu.Unlock()
	var wg sync.WaitGroup
	kinds := []func(context.Context, int){w.scatter, w.fanout, w.chain, w.retry, w.signals, w.cancel, w.continueAsNew, w.flow, w.upgrade}
	if w.OnlyUpgrades {
		kinds = kinds[len(kinds)-1:]
	}
	for _, f := range kinds {
		wg.Go(func() { f(ctx, round) })
	}
	wg.Wait()
	w.mu.Lock()
	runs := append([]started(nil), w.runs[from:]...)
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, r := range runs {
		w.await(ctx, r.id, func(store.Run) bool { return false })
	}
}

func (w *Workload) start(ctx context.Context, key string, input any) (uuid.UUID, bool) {
	return w.startVersion(ctx, key, 0, input)
}

func (w *Workload) startVersion(ctx context.Context, key string, version int, input any) (uuid.UUID, bool) {
	run, _, err := w.C.Runs.Start(ctx, runs.Trigger{TenantID: w.Tenant, Definition: key, Version: version, Input: input}, nil)
	if err != nil {
		w.fail("start %s: %v", key, err)
		return uuid.Nil, false
	}
	w.mu.Lock()
	w.runs = append(w.runs, started{run.ID, key})
	w.mu.Unlock()
	return run.ID, true
}

func (w *Workload) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errors = append(w.errors, fmt.Sprintf(format, args...))
}

// items are n scatter items; each child of chk-scatter takes the item's
// ms, spread over 0 to 24 ms, so that results trickle in and the two
// processes' ticks of the scatter interleave rather than queue.
func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"i": i, "ms": (i * 7) % 25}
	}
	return out
}

func (w *Workload) scatter(ctx context.Context, _ int) {
	w.start(ctx, "chk-scatter", map[string]any{"items": items(cmp.Or(w.Scatter, 60))})
}

func (w *Workload) fanout(ctx context.Context, _ int) {
	w.start(ctx, "chk-fanout", map[string]any{"items": items(cmp.Or(w.Fanout, 6))})
}

func (w *Workload) chain(ctx context.Context, _ int) { w.start(ctx, "chk-chain", nil) }

// flow starts four runs at once of a definition allowing one run per key
// at a time, on two keys shared with the other rounds, whose steps share
// a pool of one: some wait for their key's slot, some for the pool's.
func (w *Workload) flow(ctx context.Context, round int) {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { w.start(ctx, "chk-flow", map[string]any{"key": fmt.Sprintf("k%d", (round+i)%2)}) })
	}
	wg.Wait()
}

func (w *Workload) retry(ctx context.Context, _ int) { w.start(ctx, "chk-retry", nil) }

// signals sends a run's three signals at once, each twice with one
// request id: the second is refused as a duplicate, or lands on the run
// as the same signal, never as another.
func (w *Workload) signals(ctx context.Context, round int) {
	id, ok := w.start(ctx, "chk-signals", nil)
	if !ok {
		return
	}
	var wg sync.WaitGroup
	for _, name := range []string{"c", "a", "b"} {
		for range 2 {
			wg.Go(func() { w.signal(ctx, id, fmt.Sprintf("r%d-%s", round, name), name) })
		}
	}
	wg.Wait()
}

func (w *Workload) signal(ctx context.Context, id uuid.UUID, request, name string) {
	_, err := w.C.Runs.Signal(ctx, w.Tenant, id, engine.Signal{RequestID: request, Name: name})
	if err != nil && !apperr.Is(err, apperr.Conflict) {
		w.fail("signal %s to %s: %v", name, id, err)
	}
}

// cancel cancels a scatter once some of its children run.
func (w *Workload) cancel(ctx context.Context, _ int) {
	id, ok := w.start(ctx, "chk-cancel", map[string]any{"items": items(10)})
	if !ok {
		return
	}
	w.await(ctx, id, func(r store.Run) bool { return r.Status == engine.RunRunning })
	if err := w.C.Runs.Control(ctx, w.Tenant, id, engine.Cancel{RequestID: uuid.NewString(), Reason: "checker"}); err != nil {
		w.fail("cancel %s: %v", id, err)
	}
}

// continueAsNew continues a run as new while its first step runs and,
// at the same moment, sends it the signal its second step waits for: the
// signal must reach the run that goes on, whether it lands before the
// switch (buffered, then moved) or after (following the chain).
func (w *Workload) continueAsNew(ctx context.Context, round int) {
	id, ok := w.start(ctx, "chk-can", nil)
	if !ok {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := w.C.Runs.ContinueAsNew(ctx, w.Tenant, id, fmt.Sprintf("can-%d", round), nil); err != nil {
			w.fail("continue %s as new: %v", id, err)
		}
	})
	wg.Go(func() { w.signal(ctx, id, fmt.Sprintf("go-%d", round), "go") })
	wg.Wait()
}

// upgrade moves a run of chk-upgrade to version 2 while its steps run
// and the workers tick it, then sends the signal its last step of
// version 1 waits for: the run must end on version 2, having run the
// step version 2 adds, its upgrade recorded once.
func (w *Workload) upgrade(ctx context.Context, round int) {
	id, ok := w.startVersion(ctx, "chk-upgrade", 1, nil)
	if !ok {
		return
	}
	w.await(ctx, id, func(r store.Run) bool { return r.Status == engine.RunRunning || r.Status == engine.RunWaiting })
	if w.OnlyUpgrades {
		var wg sync.WaitGroup
		wg.Go(func() {
			_, _ = w.C.Runs.Upgrades.Upgrade(ctx, runs.UpgradeRequest{TenantID: w.Tenant, RunID: id, Version: 2, By: "checker"})
		})
		wg.Go(func() { w.signal(ctx, id, fmt.Sprintf("up-%d", round), "go") })
		wg.Wait()
		return
	}
	res, err := w.C.Runs.Upgrades.Upgrade(ctx, runs.UpgradeRequest{TenantID: w.Tenant, RunID: id, Version: 2, By: "checker"})
	if err != nil || !res.Applied {
		w.fail("upgrade %s: %v (%+v)", id, err, res.Plan)
		return
	}
	w.signal(ctx, id, fmt.Sprintf("up-%d", round), "go")
}

// await polls the run until done holds (or ctx ends).
func (w *Workload) await(ctx context.Context, id uuid.UUID, done func(store.Run) bool) {
	s := store.New(w.DB)
	for ctx.Err() == nil {
		if r, err := s.RunGet(ctx, w.Tenant, id); err == nil && (done(r) || r.Status.Terminal()) {
			return
		}
		pollPause(ctx)
	}
}

// Expectations checks how each acknowledged run ended, once all have,
// and returns what the driver itself ran into.
func (w *Workload) Expectations(ctx context.Context) ([]string, error) {
	w.mu.Lock()
	runs, out := append([]started(nil), w.runs...), append([]string(nil), w.errors...)
	w.mu.Unlock()
	s := store.New(w.DB)
	for _, r := range runs {
		v, err := w.expect(ctx, s, r)
		if err != nil {
			return nil, err
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out, nil
}

// Runs is how many triggers were acknowledged.
func (w *Workload) Runs() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.runs)
}

func (w *Workload) expect(ctx context.Context, s *store.Store, r started) (string, error) {
	run, err := s.RunGet(ctx, w.Tenant, r.id)
	if err != nil {
		return "", err
	}
	want := engine.RunSucceeded
	switch r.kind {
	case "chk-cancel":
		want = engine.RunCancelled
	case "chk-upgrade":
		if v := w.expectUpgraded(ctx, run); v != "" {
			return v, nil
		}
	case "chk-can":
		if run.Status != engine.RunTerminated || run.ContinuedToRunID == nil {
			return fmt.Sprintf("%s run %s ended %s, want terminated (continued as new)", r.kind, r.id, run.Status), nil
		}
		if run, err = s.RunGet(ctx, w.Tenant, *run.ContinuedToRunID); err != nil {
			return "", err
		}
	}
	if run.Status != want {
		return fmt.Sprintf("%s run %s ended %s (%v), want %s", r.kind, run.ID, run.Status, run.State.Error, want), nil
	}
	return "", nil
}

// Settle waits until every run has ended and every input is consumed, or
// until the deadline, and returns the checks' violations together with
// the workload's expectations.
func (w *Workload) Settle(ctx context.Context, db *pgxpool.Pool, deadline time.Time) ([]string, error) {
	for {
		open, err := Unfinished(ctx, db)
		if err != nil {
			return nil, err
		}
		inputs, err := Inputs(ctx, db)
		if err != nil {
			return nil, err
		}
		jobs, err := Jobs(ctx, db)
		if err != nil {
			return nil, err
		}
		if len(open)+len(inputs)+len(jobs) == 0 || time.Now().After(deadline) {
			break
		}
		pollPause(ctx)
	}
	found, err := Check(ctx, db)
	if err != nil {
		return nil, err
	}
	expected, err := w.Expectations(ctx)
	return append(found, expected...), err
}

// pollPause is the interval between two looks at the database.
func pollPause(ctx context.Context) {
	t := time.NewTimer(50 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// expectUpgraded checks a chk-upgrade run: on version 2, its added step
// succeeded, its upgrade recorded exactly once.
func (w *Workload) expectUpgraded(ctx context.Context, run store.Run) string {
	var entries int
	var after string
	err := w.DB.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM run_history WHERE tenant_id = $1 AND run_id = $2 AND detail LIKE 'upgraded from v1 to v2 %'),
		coalesce((SELECT state FROM run_node WHERE tenant_id = $1 AND run_id = $2 AND node = 'after'), '')`,
		run.TenantID, run.ID).Scan(&entries, &after)
	switch {
	case err != nil:
		return fmt.Sprintf("chk-upgrade run %s: %v", run.ID, err)
	case run.DefinitionVersion != 2 || entries != 1 || after != string(engine.NodeSucceeded):
		return fmt.Sprintf("chk-upgrade run %s on version %d with %d upgrade entries, its added step %q, want version 2, one entry, succeeded", run.ID, run.DefinitionVersion, entries, after)
	}
	return ""
}
