package workers_test

import (
	"testing"

	"github.com/ductor/ductor/app/engine"
)

// With local steps on, a chain triggered in a process that has the
// coordinator and steps roles runs every step in that process, its first
// one included (the start's inline tick chooses it, and it runs once the
// start commits): no step goes through a River job.
func TestLocalStepsRunAChainWithoutStepJobs(t *testing.T) {
	t.Parallel()
	b := setupLocalWith(t, nil)
	b.publish(t, chain("local", noop("a"), noop("b"), noop("c")))
	// A first run while the process's cancel listener may still be
	// connecting: until it listens, steps go through River.
	b.waitTerminal(t, b.start(t, "local", nil))
	id := b.start(t, "local", nil)
	if run := b.waitTerminal(t, id); run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	var jobs, attempts int
	if err := b.pool.QueryRow(b.ctx, `SELECT
		(SELECT count(*) FROM river_job WHERE kind = 'ductor.step' AND args->>'run_id' = $2),
		(SELECT count(*) FROM run_attempt WHERE run_id = $1 AND started_at IS NOT NULL)`, id, id.String()).Scan(&jobs, &attempts); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 || attempts != 3 {
		t.Errorf("%d step jobs and %d attempts, want none and 3: every step local", jobs, attempts)
	}
}
