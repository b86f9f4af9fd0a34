package workers_test

import (
	"sync/atomic"
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/workers"
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

// A commit can succeed with its answer lost (the connection drops after
// the commit is durable): the process takes the transaction as failed,
// yet its local steps are recorded as started there, and leased. The
// process asks the database once it answers which of them it holds, and
// runs those at once, instead of leaving them to their leases (the
// step's timeout and more) to be retried. Here every commit of a
// transaction with local steps after the run's start loses its answer:
// the chain still ends within seconds, each step started once.
func TestLocalStepsOfACommitWhoseAnswerWasLostRun(t *testing.T) {
	t.Parallel()
	var armed atomic.Bool
	var lost atomic.Int64
	b := setupLocalWith(t, func(c *workers.Config) {
		c.Testing.LoseCommitAck = func() bool {
			if !armed.Load() {
				return false
			}
			lost.Add(1)
			return true
		}
	})
	b.publish(t, chain("lost-ack", noop("a"), noop("b"), noop("c")))
	b.waitTerminal(t, b.start(t, "lost-ack", nil)) // the cancel listener connected: steps run locally
	id := b.start(t, "lost-ack", nil)
	armed.Store(true)
	if run := b.waitTerminal(t, id); run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	armed.Store(false)
	if lost.Load() == 0 {
		t.Fatal("no commit with local steps lost its answer: the test tested nothing")
	}
	var attempts, retried int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*), count(*) FILTER (WHERE attempt > 1)
		FROM run_attempt WHERE run_id = $1 AND started_at IS NOT NULL`, id).Scan(&attempts, &retried); err != nil {
		t.Fatal(err)
	}
	if attempts != 3 || retried != 0 {
		t.Errorf("%d attempts, %d of them retries; want 3 and none", attempts, retried)
	}
}
