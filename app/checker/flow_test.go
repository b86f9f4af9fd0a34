package checker

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// Flow control across two worker processes: this process only starts
// runs (each start decides under its keys' locks) and acts on them; the
// workers tick, run the steps and sweep, letting held runs go. These
// tests run one at a time, before the package's parallel tests: each
// starts two worker processes of its own, and beside the checker's
// workloads they would starve them (the old load's lost update is found
// by timing, within a minute).

// flowDefinitions are the flow tests' definitions; RunLimits and
// StepLimits name their limits for the checks.
var flowDefinitions = []string{`
key: chk-flow-keys
concurrency: [{key_expr: input.key, limit: 2}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
  - {ref: work, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 150}'}}
edges:
  - {from: gate, to: work}
`, `
key: chk-flow-newest
concurrency: [{limit: 1, strategy: cancel_newest}]
triggers: [{event: chk.newest}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`, `
key: chk-flow-replace
concurrency: [{key_expr: input.doc, limit: 1, strategy: cancel_in_progress}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`, `
key: chk-flow-debounce
debounce: {key_expr: input.user, period: 1h}
steps:
  - {ref: work, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
  - {ref: out, type: transform, with: {expr: 'input.n'}}
edges: [{from: work, to: out}]
output_expr: 'steps.out.output'
`, `
key: chk-flow-throttle
throttle: {limit: 2, period: 1s}
steps:
  - {ref: out, type: transform, with: {expr: '1'}}
`, `
key: chk-flow-leak
timeout: 1h
concurrency: [{key_expr: input.key, limit: 1}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
  - {ref: fail, type: task, retry: {max_attempts: 1}, with: {handler: builtin.fail, input_expr: '{"message": "planned"}'}}
edges: [{from: gate, to: fail}]
`}

// vendorDefinition's steps share a pool of two across definitions.
func vendorDefinition(key string) string {
	return `
key: ` + key + `
steps:
  - ref: call
    type: task
    timeout: 60s
    for_each: input.items
    concurrency: {key_expr: '"chk-vendor"', limit: 2}
    with: {handler: checker.step, input_expr: '{"ms": 500, "flow_key": "chk-vendor"}'}
`
}

func init() {
	RunLimits["chk-flow-keys"] = 2
	RunLimits["chk-flow-leak"] = 1
	StepLimits["chk-vendor"] = 2
}

// flowSetup publishes the flow definitions and starts two workers.
func flowSetup(t *testing.T, o WorkerOptions) bundle {
	t.Helper()
	b := setup(t)
	s := store.New(b.pool)
	for _, doc := range append(flowDefinitions, vendorDefinition("chk-vendor-a"), vendorDefinition("chk-vendor-b")) {
		testdb.Definition(t, s, b.w.Tenant, doc)
	}
	for range 2 {
		StartWorker(t, b.url, o)
	}
	return b
}

// startFlow starts a run and returns it as the start left it.
func (b bundle) startFlow(t *testing.T, key string, input any) store.Run {
	t.Helper()
	run, _, err := b.w.C.Runs.Start(b.ctx, runs.Trigger{TenantID: b.w.Tenant, Definition: key, Input: input}, nil)
	if err != nil {
		t.Fatalf("start %s: %v", key, err)
	}
	return run
}

// await polls the run until done holds, failing after a minute.
func (b bundle) await(t *testing.T, id uuid.UUID, what string, done func(store.Run) bool) store.Run {
	t.Helper()
	s := store.New(b.pool)
	var run store.Run
	var err error
	if !testwait.Until(b.ctx, time.Minute, func() bool {
		run, err = s.RunGet(b.ctx, b.w.Tenant, id)
		return err == nil && done(run)
	}) {
		t.Fatalf("run %s did not %s within a minute: %s (%v)\n%s", id, what, run.Status, err, Dump(b.ctx, b.pool, id))
	}
	return run
}

func (b bundle) awaitStatus(t *testing.T, id uuid.UUID, st engine.RunStatus) store.Run {
	t.Helper()
	return b.await(t, id, "become "+string(st), func(r store.Run) bool { return r.Status == st })
}

func (b bundle) signalGo(t *testing.T, id uuid.UUID) {
	t.Helper()
	if _, err := b.w.C.Runs.Signal(b.ctx, b.w.Tenant, id, engine.Signal{RequestID: "go-" + id.String(), Name: "go"}); err != nil {
		t.Fatal(err)
	}
}

// settleFlow waits for every run to end, then runs every check.
func (b bundle) settleFlow(t *testing.T) {
	t.Helper()
	found, err := b.w.Settle(b.ctx, b.pool, time.Now().Add(90*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("%d violations:\n%s", len(found), strings.Join(found, "\n"))
	}
}

// Two hot keys get sixteen runs at once, at most two of each running at
// any moment (watched in the database while they run, and checked from
// every run's start and end afterwards), each key using both its slots;
// runs of other keys are never held back. Every run waits for a signal
// before its work, sent once all are started, so no slot frees while the
// starts are still arriving: exactly twelve are held. The workers run
// under the nemesis.
func TestFlowKeysAcrossProcesses(t *testing.T) {
	b := flowSetup(t, nemesis)
	var mu sync.Mutex
	var hot, solo []store.Run
	var wg sync.WaitGroup
	for i := range 22 {
		wg.Go(func() {
			key := fmt.Sprintf("hot-%d", i%2)
			if i >= 16 {
				key = fmt.Sprintf("solo-%d", i)
			}
			run := b.startFlow(t, "chk-flow-keys", map[string]any{"key": key})
			mu.Lock()
			defer mu.Unlock()
			if i >= 16 {
				solo = append(solo, run)
			} else {
				hot = append(hot, run)
			}
		})
	}
	wg.Wait()
	for _, r := range solo {
		if r.State.Held {
			t.Errorf("run %s of a key of its own was held back", r.ID)
		}
	}
	held := 0
	for _, r := range hot {
		if r.State.Held {
			held++
		}
	}
	if held != 12 {
		t.Errorf("%d of 16 runs of two keys allowing two at a time were held back, want 12", held)
	}
	for _, r := range append(hot, solo...) {
		b.signalGo(t, r.ID) // a held run keeps it for when it starts
	}
	b.watchLimits(t, append(hot, solo...))
	b.settleFlow(t)
	spans, err := runSpans(b.ctx, b.pool, "chk-flow-keys")
	if err != nil {
		t.Fatal(err)
	}
	if peaks := Peaks(spans); peaks["hot-0"] != 2 || peaks["hot-1"] != 2 {
		t.Errorf("peak runs at once per key = %v, want 2 each: the limit, used", peaks)
	}
}

// watchLimits checks FlowLimits until every run has ended.
func (b bundle) watchLimits(t *testing.T, runs []store.Run) {
	t.Helper()
	s := store.New(b.pool)
	deadline := time.Now().Add(90 * time.Second)
	for _, r := range runs {
		var run store.Run
		if !testwait.Until(b.ctx, time.Until(deadline), func() bool {
			found, err := FlowLimits(b.ctx, b.pool)
			if err != nil {
				t.Fatal(err)
			}
			if len(found) > 0 {
				t.Fatalf("flow limits broken:\n%s", strings.Join(found, "\n"))
			}
			run, err = s.RunGet(b.ctx, b.w.Tenant, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			return run.Status.Terminal()
		}) {
			t.Fatalf("run %s still %s", r.ID, run.Status)
		}
	}
}

// cancel_newest refuses a second run at the API and cancels the one an
// event trigger starts; cancel_in_progress cancels the running run of
// the key for each newer one, and the newest runs.
func TestFlowCancelStrategiesAcrossProcesses(t *testing.T) {
	b := flowSetup(t, WorkerOptions{})
	first := b.startFlow(t, "chk-flow-newest", nil)
	_, _, err := b.w.C.Runs.Start(b.ctx, runs.Trigger{TenantID: b.w.Tenant, Definition: "chk-flow-newest"}, nil)
	if !apperr.Is(err, apperr.ConcurrencyLimit) {
		t.Fatalf("a second start at the API: %v, want concurrency_limit", err)
	}
	e, _, err := b.w.C.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.w.Tenant, Name: "chk.newest", Data: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	triggered := b.triggeredBy(t, "chk-flow-newest", e.ID)
	b.awaitStatus(t, triggered, engine.RunCancelled)
	b.awaitStatus(t, first.ID, engine.RunWaiting)
	b.signalGo(t, first.ID)
	b.awaitStatus(t, first.ID, engine.RunSucceeded)

	doc := map[string]any{"doc": 7}
	v1 := b.startFlow(t, "chk-flow-replace", doc)
	b.awaitStatus(t, v1.ID, engine.RunWaiting)
	v2 := b.startFlow(t, "chk-flow-replace", doc)
	b.awaitStatus(t, v1.ID, engine.RunCancelled)
	b.awaitStatus(t, v2.ID, engine.RunWaiting)
	v3 := b.startFlow(t, "chk-flow-replace", doc)
	b.awaitStatus(t, v2.ID, engine.RunCancelled)
	b.awaitStatus(t, v3.ID, engine.RunWaiting)
	b.signalGo(t, v3.ID)
	b.awaitStatus(t, v3.ID, engine.RunSucceeded)
	b.settleFlow(t)
}

// triggeredBy finds the run an event started of a definition.
func (b bundle) triggeredBy(t *testing.T, def string, event uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := b.pool.QueryRow(b.ctx, `SELECT id FROM run WHERE definition_key = $1 AND search_attributes->>'event_id' = $2`,
		def, event.String()).Scan(&id)
	if err != nil {
		t.Fatalf("the run event %s started: %v", event, err)
	}
	return id
}

// Five starts of a key within its debounce period make one run, held
// until the key has been quiet for the period (an hour: the database's
// clock is moved on), which then runs once with the last input.
func TestFlowDebounceAcrossProcesses(t *testing.T) {
	b := flowSetup(t, WorkerOptions{})
	var ids []uuid.UUID
	for n := range 5 {
		ids = append(ids, b.startFlow(t, "chk-flow-debounce", map[string]any{"user": "u1", "n": n}).ID)
	}
	other := b.startFlow(t, "chk-flow-debounce", map[string]any{"user": "u2", "n": 9}).ID
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("five starts made runs %v, want one", ids)
		}
	}
	if other == ids[0] {
		t.Fatal("another key's start joined the debounce")
	}
	if err := store.New(b.pool).ClockShift(b.ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	run := b.awaitStatus(t, ids[0], engine.RunSucceeded)
	if fmt.Sprint(run.State.Output) != "4" {
		t.Errorf("the debounced run's output is %v, want the last input's n, 4", run.State.Output)
	}
	b.awaitStatus(t, other, engine.RunSucceeded)
	b.settleFlow(t)
	var executions int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM checker_execution WHERE run_id = $1`, ids[0]).Scan(&executions); err != nil {
		t.Fatal(err)
	}
	if executions != 1 {
		t.Errorf("the debounced run's step ran %d times, want once", executions)
	}
}

// A step pool of two holds eight 500 ms tasks of three runs of two
// definitions to two at a time, and uses both slots.
func TestFlowStepPoolAcrossProcesses(t *testing.T) {
	b := flowSetup(t, WorkerOptions{})
	runs := []uuid.UUID{
		b.startFlow(t, "chk-vendor-a", map[string]any{"items": items(3)}).ID,
		b.startFlow(t, "chk-vendor-b", map[string]any{"items": items(3)}).ID,
		b.startFlow(t, "chk-vendor-a", map[string]any{"items": items(2)}).ID,
	}
	for _, id := range runs {
		b.awaitStatus(t, id, engine.RunSucceeded)
	}
	b.settleFlow(t)
	spans, err := intervals(b.ctx, b.pool, `SELECT flow_key, started_at, finished_at FROM checker_execution WHERE flow_key = $1`, "chk-vendor")
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 8 || Peaks(spans)["chk-vendor"] != 2 {
		t.Errorf("%d executions, at most %d at once; want 8, two at a time", len(spans), Peaks(spans)["chk-vendor"])
	}
}

// A throttle of two starts a second spaces six starts asked for at once:
// the i-th starts no sooner than i/2 seconds after the first was asked
// for, and none is dropped.
func TestFlowThrottleAcrossProcesses(t *testing.T) {
	b := flowSetup(t, WorkerOptions{})
	var runs []store.Run
	for range 6 {
		runs = append(runs, b.startFlow(t, "chk-flow-throttle", nil))
	}
	for i, r := range runs {
		run := b.awaitStatus(t, r.ID, engine.RunSucceeded)
		earliest := runs[0].CreatedAt.Add(time.Duration(i/2) * time.Second)
		if run.State.StartedAt.Before(earliest) {
			t.Errorf("start %d began %s after the first was asked for, before its turn (%s)",
				i, run.State.StartedAt.Sub(runs[0].CreatedAt), earliest.Sub(runs[0].CreatedAt))
		}
	}
	b.settleFlow(t)
}

// A key's slot frees however its run ends (failed, cancelled while
// running or waiting, timed out, continued as new: the successor holds
// it on), and once all have ended a new run of the key starts at once.
func TestFlowSlotsNeverLeakAcrossProcesses(t *testing.T) {
	b := flowSetup(t, WorkerOptions{})
	in := map[string]any{"key": "x"}
	var runs []uuid.UUID
	for range 6 {
		runs = append(runs, b.startFlow(t, "chk-flow-leak", in).ID)
	}
	failed, cancelled, waitingCancelled, timedOut, continued, last := runs[0], runs[1], runs[2], runs[3], runs[4], runs[5]
	b.awaitStatus(t, failed, engine.RunWaiting)
	b.cancel(t, waitingCancelled)
	b.awaitStatus(t, waitingCancelled, engine.RunCancelled)
	b.signalGo(t, failed)
	b.awaitStatus(t, failed, engine.RunFailed)
	b.awaitStatus(t, cancelled, engine.RunWaiting)
	b.cancel(t, cancelled)
	b.awaitStatus(t, timedOut, engine.RunWaiting)
	if err := store.New(b.pool).ClockShift(b.ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	b.awaitStatus(t, timedOut, engine.RunTimedOut)
	b.awaitStatus(t, continued, engine.RunWaiting)
	next, err := b.w.C.Runs.ContinueAsNew(b.ctx, b.w.Tenant, continued, "can", nil)
	if err != nil {
		t.Fatal(err)
	}
	successor := uuid.MustParse(next)
	b.awaitStatus(t, successor, engine.RunWaiting)
	if run, _ := store.New(b.pool).RunGet(b.ctx, b.w.Tenant, last); run.Status != engine.RunPending {
		t.Fatalf("the last run is %s while the successor holds the slot", run.Status)
	}
	b.cancel(t, successor)
	b.awaitStatus(t, last, engine.RunWaiting)
	b.signalGo(t, last)
	b.awaitStatus(t, last, engine.RunFailed)
	if fresh := b.startFlow(t, "chk-flow-leak", in); fresh.State.Held {
		t.Fatal("a new run of the key is held back once every run of it has ended")
	} else {
		b.awaitStatus(t, fresh.ID, engine.RunWaiting)
		b.cancel(t, fresh.ID)
	}
	b.settleFlow(t)
}

func (b bundle) cancel(t *testing.T, id uuid.UUID) {
	t.Helper()
	if err := b.w.C.Runs.Control(b.ctx, b.w.Tenant, id, engine.Cancel{RequestID: uuid.NewString(), Reason: "checker"}); err != nil {
		t.Fatal(err)
	}
}

// A slot released while its run still runs (its flow_slot row deleted, as
// a release at a cancel request would) lets the next run of the key start
// beside it, and FlowOverlaps names both: the check fails when the
// guarantee breaks.
func TestFlowOverlapsSeeASlotReleasedEarly(t *testing.T) {
	b := flowSetup(t, WorkerOptions{})
	in := map[string]any{"key": "early"}
	first := b.startFlow(t, "chk-flow-leak", in).ID
	b.awaitStatus(t, first, engine.RunWaiting)
	second := b.startFlow(t, "chk-flow-leak", in)
	if !second.State.Held {
		t.Fatal("the second run of the key was not held back while the first holds its slot")
	}
	if _, err := b.pool.Exec(b.ctx, `DELETE FROM flow_slot WHERE run_id = $1`, first); err != nil {
		t.Fatal(err)
	}
	b.awaitStatus(t, second.ID, engine.RunWaiting)
	for _, id := range []uuid.UUID{first, second.ID} {
		b.signalGo(t, id)
		b.awaitStatus(t, id, engine.RunFailed)
	}
	found, err := FlowOverlaps(b.ctx, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	want := `chk-flow-leak runs of key "early": 2 at once, limit 1`
	if len(found) != 1 || !strings.HasPrefix(found[0], want) ||
		!strings.Contains(found[0], first.String()) || !strings.Contains(found[0], second.ID.String()) {
		t.Fatalf("FlowOverlaps found %q, want %s naming runs %s and %s", found, want, first, second.ID)
	}
	t.Log(found[0])
}

// A start whose transaction began before the end of the run holding its
// key's slot, and waited on the key's lock meanwhile, takes the slot once
// that end has committed and starts the run in that transaction: the
// run's started_at, its transaction's now(), comes before the other's
// finished_at, though the two never held the slot together. FlowOverlaps
// orders them by their commits and finds nothing.
func TestFlowOverlapsOrderRunsByTheirCommits(t *testing.T) {
	b := flowSetup(t, WorkerOptions{})
	in := map[string]any{"key": "handover"}
	first := b.startFlow(t, "chk-flow-leak", in).ID
	b.awaitStatus(t, first, engine.RunWaiting)
	var k store.FlowKey
	if err := b.pool.QueryRow(b.ctx, `SELECT pool, key FROM flow_slot WHERE run_id = $1`, first).Scan(&k.Pool, &k.Key); err != nil {
		t.Fatal(err)
	}
	lock, err := b.pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback(b.ctx) }()
	var holder int
	if err := lock.QueryRow(b.ctx, `SELECT pg_backend_pid()`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	if err := store.New(lock).FlowLock(b.ctx, b.w.Tenant, []store.FlowKey{k}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		run store.Run
		err error
	}
	started := make(chan result, 1)
	go func() {
		run, _, err := b.w.C.Runs.Start(b.ctx, runs.Trigger{TenantID: b.w.Tenant, Definition: "chk-flow-leak", Input: in}, nil)
		started <- result{run, err}
	}()
	b.awaitBlockedBy(t, holder)
	b.signalGo(t, first)
	ended := b.awaitStatus(t, first, engine.RunFailed)
	if err := lock.Rollback(b.ctx); err != nil {
		t.Fatal(err)
	}
	r := <-started
	if r.err != nil {
		t.Fatal(r.err)
	}
	second := r.run
	if second.State.Held {
		t.Fatal("the second run was held back though the first had ended")
	}
	b.awaitStatus(t, second.ID, engine.RunWaiting)
	b.signalGo(t, second.ID)
	second = b.awaitStatus(t, second.ID, engine.RunFailed)
	if !second.State.StartedAt.Before(*ended.FinishedAt) {
		t.Fatalf("the second run's started_at %s is not before the first's finished_at %s", second.State.StartedAt, *ended.FinishedAt)
	}
	found, err := FlowOverlaps(b.ctx, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("FlowOverlaps found %d violations:\n%s", len(found), strings.Join(found, "\n"))
	}
	b.settleFlow(t)
}

// awaitBlockedBy waits until a session waits for a lock the backend
// holder holds.
func (b bundle) awaitBlockedBy(t *testing.T, holder int) {
	t.Helper()
	if !testwait.Until(b.ctx, time.Minute, func() bool {
		var waiting bool
		err := b.pool.QueryRow(b.ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid)))`, holder).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		return waiting
	}) {
		t.Fatal("no start waited for the key's lock within a minute")
	}
}
