package shell

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// twoTasks publishes a definition of two task steps, a then b, and starts
// n runs of it; each run's first tick dispatches a.
func twoTasks(t *testing.T, c *Shell, pool *pgxpool.Pool, n int) (store.Tenant, []store.RunKey) {
	t.Helper()
	ctx := context.Background()
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	testdb.Definition(t, s, tenant.ID, `
key: two
steps:
  - { ref: a, type: task, with: { handler: builtin.noop } }
  - { ref: b, type: task, with: { handler: builtin.noop } }
edges:
  - { from: a, to: b }
`)
	var keys []store.RunKey
	for range n {
		run, _, err := startRun(ctx, c, tenant.ID, "two")
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, store.RunKey{TenantID: tenant.ID, ID: run.ID})
	}
	return tenant, keys
}

// resultsOfA is a result group of step a's success for each run.
// resultsOfA hands over a's result for each run, as record does, for
// the test to write as one group.
func resultsOfA(c *Shell, keys []store.RunKey) []*resultRequest {
	var group []*resultRequest
	for _, k := range keys {
		group = append(group, &resultRequest{key: k, result: resultOfA(), until: time.Now().Add(time.Minute), done: make(chan struct{})})
	}
	c.Steps.results.mu.Lock()
	c.Steps.results.unrecorded += len(group)
	c.Steps.results.mu.Unlock()
	return group
}

func resultOfA() engine.StepResult {
	return engine.StepResult{Node: "a", Generation: 0, Attempt: 1, Output: map[string]any{"ok": true}}
}

func nodeState(t *testing.T, s *store.Store, k store.RunKey, node string) engine.NodeState {
	t.Helper()
	nodes, err := s.RunNodesByName(context.Background(), k.TenantID, k.ID, []string{node})
	if err != nil || len(nodes) != 1 {
		t.Fatalf("node %s of %s: %v (%d)", node, k.ID, err, len(nodes))
	}
	return nodes[0].State
}

// A group ticks its runs together in one transaction; a run that cannot be
// ticked (here: its manifest is gone) is left, untouched, to its tick job,
// with its result stored for it, while the others advance.
func TestResultGroupTicksRunsTogetherAndHandsAFailingRunToItsTickJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, pool := shellOn(t)
	s := store.New(pool)
	_, keys := twoTasks(t, c, pool, 3)
	broken := keys[2]
	if _, err := pool.Exec(ctx, `UPDATE run SET manifest_hash = 'gone', definition_version = 99 WHERE id = $1`, broken.ID); err != nil {
		t.Fatal(err)
	}
	before, err := s.RunGet(ctx, broken.TenantID, broken.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st := nodeState(t, s, keys[0], "b"); st != engine.NodePending {
		t.Fatalf("b is %s before a's result, want pending", st)
	}
	group := resultsOfA(c, keys)
	c.Steps.results.write(ctx, group)
	for _, r := range group {
		<-r.done
		if r.err != nil {
			t.Fatalf("run %s: %v", r.key.ID, r.err)
		}
	}
	for _, k := range keys[:2] {
		if st := nodeState(t, s, k, "a"); st != engine.NodeSucceeded {
			t.Errorf("run %s: a is %s, want succeeded", k.ID, st)
		}
		if st := nodeState(t, s, k, "b"); st != engine.NodeRunning {
			t.Errorf("run %s: b is %s, want running (dispatched)", k.ID, st)
		}
	}
	after, err := s.RunGet(ctx, broken.TenantID, broken.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.RecordVersion != before.RecordVersion {
		t.Errorf("the run that failed to tick moved from version %d to %d", before.RecordVersion, after.RecordVersion)
	}
	var pending, ticks int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM run_input WHERE run_id = $1 AND consumed_at IS NULL`, broken.ID).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'ductor.tick' AND args->>'run_id' = $1`, broken.ID.String()).Scan(&ticks); err != nil {
		t.Fatal(err)
	}
	if pending != 1 || ticks != 1 {
		t.Errorf("failing run: %d pending inputs and %d tick jobs, want its result stored and one tick job", pending, ticks)
	}
}

// A worker hands its result over and returns at once; Close waits until
// the result is written.
func TestCloseWaitsForHandedOverResults(t *testing.T) {
	t.Parallel()
	c, pool := shellOn(t)
	s := store.New(pool)
	_, keys := twoTasks(t, c, pool, 20)
	for _, k := range keys {
		if err := c.Steps.results.record(k, resultOfA(), time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	for _, k := range keys {
		if st := nodeState(t, s, k, "a"); st != engine.NodeSucceeded {
			t.Fatalf("run %s after Close: a is %s, want succeeded", k.ID, st)
		}
	}
}

// Concurrent reservations of one tenant's virtual time never overlap, and
// another tenant's first reservation starts at the queue's head, not
// behind the busy tenant's spans. With no job queued the head is the
// database's clock (a day back), which moves on while the test runs: the
// busy tenant reserves a second each, so its spans reach far past
// anything a loaded machine's delay could move the head by.
func TestFairClockReservationsDoNotOverlap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, pool := shellOn(t)
	s := store.New(pool)
	a, b := testdb.Tenant(t, s, nil), testdb.Tenant(t, s, nil)
	const n = 50
	const span = time.Second
	starts := make([]time.Time, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tag, err := c.deps.clock.advance(ctx, a.ID, QueueStepsStandard, span)
			if err != nil {
				t.Error(err)
			}
			starts[i] = tag.Start
		})
	}
	wg.Wait()
	slices.SortFunc(starts, func(x, y time.Time) int { return x.Compare(y) })
	for i := 1; i < n; i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < span {
			t.Fatalf("reservations %d and %d of one tenant are %v apart, less than the span %v each reserved", i-1, i, gap, span)
		}
	}
	first, err := c.deps.clock.advance(ctx, b.ID, QueueStepsStandard, StepCost)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Start.Before(starts[n-1]) {
		t.Errorf("tenant B's first tag %v queues behind tenant A's last %v", first, starts[n-1])
	}
}

// An attempt is taken once it is dispatched and until it has a result;
// the same attempt asked twice in one group gets the same answer.
func TestAttemptStartsInGroups(t *testing.T) {
	t.Parallel()
	c, pool := shellOn(t)
	_, keys := twoTasks(t, c, pool, 1)
	a := store.AttemptTake{Key: store.AttemptKey{Run: keys[0], Node: "a", Generation: 0, Attempt: 1}, Lease: time.Minute}
	start := func() (store.TakeOutcome, error) {
		outcome, _, err := c.Steps.starts.start(context.Background(), a, false, time.Now())
		return outcome, err
	}
	var wg sync.WaitGroup
	outcomes := make([]store.TakeOutcome, 2)
	for i := range outcomes {
		wg.Go(func() {
			outcome, err := start()
			if err != nil {
				t.Error(err)
			}
			outcomes[i] = outcome
		})
	}
	wg.Wait()
	if outcomes[0] != store.Taken || outcomes[1] != store.Taken {
		t.Fatalf("a dispatched attempt was not taken: %v", outcomes)
	}
	if err := c.Steps.results.record(keys[0], resultOfA(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := c.Steps.results.drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if outcome, err := start(); err != nil || outcome != store.Finished {
		t.Fatalf("an attempt with a result was taken again: %v, %v", outcome, err)
	}
	a.Key.Attempt, a.By = 2, time.Now().Add(-time.Hour) // by the database's clock, long past
	if outcome, err := start(); err != nil || outcome != store.TooLate {
		t.Fatalf("a start past its bound: %v, %v, want refused as too late", outcome, err)
	}
}

// The engine runs on the result group's goroutine: a panic there fails
// the group's transaction, each result is then recorded on its own, and
// the process goes on.
func TestResultGroupSurvivesAPanicInTheEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var armed atomic.Bool
	var once sync.Once
	c, pool := shellOn(t, func(cfg *Config) {
		cfg.Testing.Fault = func(point string) error {
			if armed.Load() && point == FaultBeforeDecide {
				once.Do(func() { panic("engine bug") })
			}
			return nil
		}
	})
	s := store.New(pool)
	_, keys := twoTasks(t, c, pool, 2)
	armed.Store(true)
	group := resultsOfA(c, keys)
	c.Steps.results.write(ctx, group)
	for _, r := range group {
		<-r.done
		if r.err != nil {
			t.Fatalf("run %s: %v", r.key.ID, r.err)
		}
		if st := nodeState(t, s, r.key, "a"); st != engine.NodeSucceeded {
			t.Errorf("run %s after the panic: a is %s, want succeeded", r.key.ID, st)
		}
	}
}
