package workers_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// Two coordinators (two pools, two River clients) drive the same runs
// while both also tick every run by hand as fast as they can. Every run
// must end exactly as a serial run would, with a gap-free history whose
// length equals the transition count. (Tick jobs wait for the run's lock
// before reading, so these races serialize; the record_version guard that
// would catch a writer that did not is tested below.)
func TestTwoCoordinatorsTickTheSameRuns(t *testing.T) {
	t.Parallel()
	// Every result goes through a tick job, racing the hand-driven ticks.
	noInline := func(c *workers.Config) { c.NoInlineTicks = true }
	executed := &executions{}
	// One process runs the steps its ticks dispatch itself (local
	// steps), the other through River: results reach each run both ways.
	b := setupLocalWith(t, noInline, executed.handlers())
	second, err := pgxpool.New(b.ctx, testdb.SearchPathURL(t, b.pool))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Close)
	other := startWith(t, second, roles{steps: true, config: noInline, handlers: []map[string]steps.Handler{executed.handlers()}})

	b.publish(t, chain("contended",
		counted("a"), step("b", definition.TypeTransform, map[string]any{"expr": `{"n": 1}`}), counted("c"), counted("d")))
	const runs = 40
	ids := make([]uuid.UUID, runs)
	for i := range ids {
		ids[i] = b.start(t, "contended", map[string]any{"i": i})
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	for _, c := range []*workers.Runtime{b.coord, other} {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !done.Load() {
					for _, id := range ids {
						if err := c.Ticker.Tick(b.ctx, b.tenant.ID, id); err != nil && !errors.Is(err, errStop) {
							t.Errorf("tick: %v", err)
							return
						}
					}
				}
			}()
		}
	}
	for _, id := range ids {
		run := b.waitTerminal(t, id)
		if run.Status != engine.RunSucceeded {
			t.Errorf("run %s: %s", id, run.Status)
		}
		history, err := b.store.RunHistory(b.ctx, b.tenant.ID, id, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range history {
			if h.Seq != int64(i+1) {
				t.Fatalf("run %s: history entry %d has seq %d", id, i, h.Seq)
			}
		}
		if int64(len(history)) != run.TransitionCount {
			t.Errorf("run %s: %d history entries, %d transitions", id, len(history), run.TransitionCount)
		}
		attempts, _ := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
		if len(attempts) != 4 {
			t.Errorf("run %s: %d attempts, want one per node (4)", id, len(attempts))
		}
		// Local steps (DUCTOR_TEST_LOCAL_STEPS=on) have no job; none has two.
		if jobs := stepJobs(t, b, id); jobs > 3 {
			t.Errorf("run %s: %d step jobs, want at most one per task (3)", id, jobs)
		}
		for _, node := range []string{"a", "c", "d"} {
			if n := executed.of(id, node); n != 1 {
				t.Errorf("run %s: %s executed %d times, want once", id, node, n)
			}
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("record_version conflicts counted: %d", b.coord.Ticker.Conflicts.Load()+other.Ticker.Conflicts.Load())
}

// A tick's final write is guarded by the record_version it read: a write
// decided on an older version changes nothing and reports ErrConflict.
func TestRunUpdateGuardedByRecordVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: guarded
steps:
  - { ref: wait, type: signal, with: { name: go } }
`)
	id := b.start(t, "guarded", nil)
	b.waitNode(t, id, "wait", engine.NodeWaiting)
	stale, err := b.store.RunGet(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.signal(t, id, "r1", "go", nil); err != nil {
		t.Fatal(err)
	}
	fresh := b.waitRunStatus(t, id, engine.RunSucceeded)
	if fresh.RecordVersion == stale.RecordVersion {
		t.Fatal("the run's version did not move")
	}
	var w store.RunWrites
	st := stale.State
	st.Status = engine.RunFailed
	if err := w.Update(stale, st); err != nil {
		t.Fatal(err)
	}
	if err := b.store.RunWritesFlush(b.ctx, &w); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale write: %v, want ErrConflict", err)
	}
	after, err := b.store.RunGet(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != engine.RunSucceeded || after.RecordVersion != fresh.RecordVersion {
		t.Fatalf("after a stale write: %s v%d, want succeeded v%d", after.Status, after.RecordVersion, fresh.RecordVersion)
	}
}

var errStop = errors.New("stop")

// stepJobs counts a run's steps that River jobs were ever inserted for
// (every step a step batch carries, whichever run its job is named by).
func stepJobs(t *testing.T, b testBundle, runID uuid.UUID) int {
	t.Helper()
	var n int
	err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM river_job j,
		jsonb_array_elements(jsonb_build_array(j.args) || coalesce(j.args->'more', '[]'::jsonb)) AS m(a)
		WHERE j.kind = 'ductor.step' AND m.a->>'run_id' = $1`, runID.String()).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
