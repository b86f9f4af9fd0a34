package shell

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

// A task step that this deployment's own handlers run is a River job on
// its tier's step queue. When no process with the steps role runs, or
// none works that queue, nothing fetches the job and the task would wait
// forever. So every process with the steps role says, every
// StepBeatEvery, that it works the step queues (HeartbeatSteps: a
// step_worker row per process and queue, by the database's clock), and
// the sweep fails as no_worker the task jobs still available past their
// schedule_to_start on queues that no process has been seen working
// within stepAliveFor (failUnserved). A backlog behind live workers is
// never a missing worker, however long a task waits in it: while a
// worker of its queue is alive, a task waits its turn.
const (
	// StepBeatEvery is how often a steps process records that it works
	// the step queues.
	StepBeatEvery = 5 * time.Second
	// stepAliveFor is how long a process counts as working a queue after
	// it was last seen: several beats, so a slow beat is no outage.
	stepAliveFor = 6 * StepBeatEvery
	// noWorkerEvery is how often a coordinator process looks for tasks
	// no worker serves (a full batch goes round again at once).
	noWorkerEvery = time.Second
)

// unservedGate spaces the coordinator's looks for unserved tasks.
type unservedGate struct {
	mu   sync.Mutex
	next time.Time
}

func (g *unservedGate) due(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !now.Before(g.next)
}

// done sets the next look: at once after a full batch.
func (g *unservedGate) done(now time.Time, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n < sweepBatch {
		g.next = now.Add(noWorkerEvery)
	}
}

// failUnserved fails as no_worker the task steps whose River job waited
// past its schedule_to_start on a queue no process has been seen working
// lately: a retryable failure, retried by the step's policy. Their jobs
// are cancelled, so a worker that comes later does not run a stale
// attempt.
func (c *Sweeper) failUnserved(ctx context.Context, tx pgx.Tx, s *store.Store) (int, error) {
	now := time.Now()
	if !c.unserved.due(now) {
		return 0, nil
	}
	queues, err := s.StepQueuesUnserved(ctx, StepQueues(), stepAliveFor)
	if err != nil || len(queues) == 0 {
		c.unserved.done(now, 0)
		return 0, err
	}
	jobs, err := s.StepJobsCancelUnserved(ctx, queues, sweepBatch)
	if err != nil {
		return 0, err
	}
	for _, j := range jobs {
		if err := c.failNoWorker(ctx, tx, j); err != nil {
			return 0, err
		}
	}
	c.unserved.done(now, len(jobs))
	return len(jobs), nil
}

// failNoWorker fails every step the job carries (a batch's too).
func (c *Sweeper) failNoWorker(ctx context.Context, tx pgx.Tx, j store.UnservedJob) error {
	var args StepArgs
	if err := jsonvalue.Unmarshal(j.Args, &args); err != nil {
		return fmt.Errorf("decode unserved step job: %w", err)
	}
	for _, a := range args.Members() {
		handler, _ := a.Params["handler"].(string)
		wait := time.Duration(a.ScheduleToStartMS) * time.Millisecond
		res := engine.StepResult{Node: a.Node, Generation: a.Generation, Attempt: a.Attempt, Error: &engine.Error{
			Code: CodeNoWorker, Retryable: true,
			Message: fmt.Sprintf("no worker took the task within %s: no process with the steps role has worked queue %q in the last %s, for handler %q",
				wait, j.Queue, stepAliveFor, handler),
		}}
		if err := c.w.Deliver(ctx, tx, a.TenantID, a.RunID, res); err != nil {
			return err
		}
	}
	return nil
}
