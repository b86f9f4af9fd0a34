package workers_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/workers"
)

var errCrash = errors.New("injected crash")

// A tick that dies at any point of its transaction (or after committing,
// before River records the job as done) is retried by River; every run
// still completes with each task executed once, with one attempt each,
// whether its steps go through River (one step job each) or run where
// their tick was decided (local steps: at most one step job a step, for
// a step whose tick found the process's cancel listener not listening
// yet).
func TestTickCrashAtEachPoint(t *testing.T) {
	t.Parallel()
	points := []string{shell.FaultBeforeDecide, shell.FaultAfterSave, shell.FaultAfterEnqueue,
		shell.FaultAfterUpdate, shell.FaultAfterCommit}
	for _, local := range []bool{false, true} {
		for _, point := range points {
			name := point
			if local {
				name += "/local"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var crashes atomic.Int32
				runs := &executions{}
				setup := setupWith
				if local {
					setup = setupLocalWith
				}
				b := setup(t, func(c *workers.Config) {
					// A crash after commit is a tick job's: inline ticks
					// commit with the step's own job.
					c.NoInlineTicks = point == shell.FaultAfterCommit
					if !local { // River's path, even under DUCTOR_TEST_LOCAL_STEPS=on
						c.LocalSteps = nil
					}
					c.Testing.Fault = func(p string) error {
						if p == point && crashes.Add(1) <= 4 {
							return errCrash
						}
						return nil
					}
				}, runs.handlers())
				b.publish(t, chain("crashy", counted("a"), counted("b"), counted("c")))
				var ids []uuid.UUID
				for i := range 4 {
					ids = append(ids, b.start(t, "crashy", map[string]any{"i": i}))
				}
				for _, id := range ids {
					run := b.waitTerminal(t, id)
					if run.Status != engine.RunSucceeded {
						t.Fatalf("run %s: %s", run.ID, run.Status)
					}
					jobs := stepJobs(t, b, run.ID)
					if (!local && jobs != 3) || (local && jobs > 3) {
						t.Errorf("run %s: %d step jobs, want 3 (no duplicate, no orphan)", run.ID, jobs)
					}
					for _, node := range []string{"a", "b", "c"} {
						if n := runs.of(run.ID, node); n != 1 {
							t.Errorf("run %s: %s executed %d times, want once", run.ID, node, n)
						}
					}
					attempts, _ := b.store.RunAttempts(b.ctx, b.tenant.ID, run.ID)
					for _, a := range attempts {
						if a.Attempt.Attempt != 1 || a.FinishedAt.IsZero() || a.Error != nil {
							t.Errorf("run %s: attempt %+v", run.ID, a)
						}
					}
					if len(attempts) != 3 {
						t.Errorf("run %s: %d attempts, want 3", run.ID, len(attempts))
					}
				}
				if crashes.Load() == 0 {
					t.Fatalf("no tick reached %s", point)
				}
			})
		}
	}
}

// executions counts a test handler's executions by run and node.
type executions struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *executions) handlers() map[string]steps.Handler {
	return map[string]steps.Handler{"test.counted": func(_ context.Context, c steps.Call) (any, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.n == nil {
			e.n = map[string]int{}
		}
		e.n[c.RunID+"/"+c.Node]++
		return map[string]any{}, nil
	}}
}

func (e *executions) of(run uuid.UUID, node string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n[run.String()+"/"+node]
}

// counted is a task whose executions an executions counts.
func counted(ref string) definition.Step {
	return step(ref, definition.TypeTask, map[string]any{"handler": "test.counted"})
}
