package workers_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/workers"
)

var errCrash = errors.New("injected crash")

// A tick that dies at any point of its transaction (or after committing,
// before River records the job as done) is retried by River; every run
// still completes with exactly one step job and one attempt per task.
func TestTickCrashAtEachPoint(t *testing.T) {
	t.Parallel()
	points := []string{shell.FaultBeforeDecide, shell.FaultAfterSave, shell.FaultAfterEnqueue,
		shell.FaultAfterUpdate, shell.FaultAfterCommit}
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			var crashes atomic.Int32
			b := setupWith(t, func(c *workers.Config) {
				// A crash after commit is a tick job's: inline ticks
				// commit with the step's own job.
				c.NoInlineTicks = point == shell.FaultAfterCommit
				c.Testing.Fault = func(p string) error {
					if p == point && crashes.Add(1) <= 4 {
						return errCrash
					}
					return nil
				}
			})
			b.publish(t, chain("crashy", noop("a"), noop("b"), noop("c")))
			var ids []uuid.UUID
			for i := range 4 {
				ids = append(ids, b.start(t, "crashy", map[string]any{"i": i}))
			}
			for _, id := range ids {
				run := b.waitTerminal(t, id)
				if run.Status != engine.RunSucceeded {
					t.Fatalf("run %s: %s", run.ID, run.Status)
				}
				if jobs := stepJobs(t, b, run.ID); jobs != 3 {
					t.Errorf("run %s: %d step jobs, want 3 (no duplicate, no orphan)", run.ID, jobs)
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
