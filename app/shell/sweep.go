package shell

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

const (
	// sweepBatch bounds what one sweep transaction claims; a full batch
	// goes round again at once.
	sweepBatch = 500
	// SweepEvery is how often a coordinator process looks for due timers,
	// due retries and lost attempts: the granularity of Ductor's timers.
	SweepEvery = 100 * time.Millisecond
)

// SweepAll fires due timers, enqueues retries whose backoff is over,
// reports attempts whose worker died (lease expired without a result, or
// job running past its timeout without a start) as a retryable failure,
// ticks again the runs of tick jobs that died mid-tick and, now and
// then, the runs holding inputs no tick job will drain, completes step
// jobs whose result was recorded but whose River completion was lost,
// forgets long-expired bridge task claims and puts step jobs that River
// snoozed, retried or rescued back at the head of their queue (they lost
// their fair tag): SweepOnce, again at once while a batch comes back
// full.
func (c *Sweeper) SweepAll(ctx context.Context) {
	for {
		n, err := c.SweepOnce(ctx)
		if err != nil && ctx.Err() == nil {
			c.log.ErrorContext(ctx, "sweep", "err", err)
		}
		if err != nil || n < sweepBatch {
			return
		}
	}
}

// SweepOnce handles one batch in one transaction and returns the largest
// number of rows it claimed of any kind.
func (c *Sweeper) SweepOnce(ctx context.Context) (int, error) {
	var claimed int
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		timers, err := c.fireTimers(ctx, tx, s)
		if err != nil {
			return err
		}
		lost, err := c.reportLost(ctx, tx, s)
		if err != nil {
			return err
		}
		rescued, err := c.rescueTicks(ctx, tx, s)
		if err != nil {
			return err
		}
		if _, err := c.wakeForgotten(ctx, tx, s); err != nil {
			return err
		}
		completed, err := s.StepJobsCompleteFinished(ctx, c.RescueWindow, sweepBatch)
		if err != nil {
			return err
		}
		if _, err := c.wakePoolWaits(ctx, s); err != nil {
			return err
		}
		due, err := c.enqueueDue(ctx, tx, s)
		if err != nil {
			return err
		}
		expired, err := s.BridgeTasksDeleteExpired(ctx, taskKeep, sweepBatch)
		if err != nil {
			return err
		}
		unstarted, err := c.failUnstarted(ctx, tx, s)
		if err != nil {
			return err
		}
		unserved, err := c.failUnserved(ctx, tx, s)
		if err != nil {
			return err
		}
		var retagged int
		if !c.Testing.plainFIFO() {
			retagged, err = s.StepJobsRetag(ctx, StepQueues(), sweepBatch)
		}
		claimed = max(timers, lost, rescued, completed, due, expired, unstarted, unserved, retagged)
		return err
	})
	return claimed, err
}

// StepQueues are the tiers' step queues and their sparse lanes.
func StepQueues() []string {
	var qs []string
	for tier := range TierWeights {
		qs = append(qs, StepQueue(tier), SparseLane(StepQueue(tier)))
	}
	return qs
}

func (c *Sweeper) fireTimers(ctx context.Context, tx pgx.Tx, s *store.Store) (int, error) {
	timers, err := s.TimersClaimDue(ctx, sweepBatch)
	if err != nil {
		return 0, err
	}
	for _, t := range timers {
		if err := c.w.Deliver(ctx, tx, t.TenantID, t.RunID, engine.TimerFired{TimerID: t.TimerID, Node: t.Node}); err != nil {
			return 0, err
		}
	}
	return len(timers), nil
}

// reportLost reports attempts whose worker died: those whose lease ran
// out without a result, and those whose River job has been running for
// longer than the rescue window although the attempt was never started
// (the worker died between fetching the job and recording the start, so
// there is no lease to run out). Their River jobs
// are finalized at the same time, not an hour later by River's rescuer:
// River's rescue follows Ductor's detection, and since a step job has one
// River attempt, River never runs it again.
func (c *Sweeper) reportLost(ctx context.Context, tx pgx.Tx, s *store.Store) (int, error) {
	lost, err := s.AttemptsClaimLost(ctx, sweepBatch)
	if err != nil {
		return 0, err
	}
	stranded, err := s.StepJobsClaimStranded(ctx, c.RescueWindow, sweepBatch)
	if err != nil {
		return 0, err
	}
	if _, err := s.StepJobsDiscardLost(ctx, lost); err != nil {
		return 0, err
	}
	lost = append(lost, stranded...)
	for _, a := range lost {
		res := engine.StepResult{Node: a.Node, Generation: a.Generation, Attempt: a.Attempt, Error: &engine.Error{
			Code: "worker_lost", Message: fmt.Sprintf("the worker of attempt %d stopped answering", a.Attempt), Retryable: true,
		}}
		if err := c.w.Deliver(ctx, tx, a.TenantID, a.RunID, res); err != nil {
			return 0, err
		}
	}
	return len(lost), nil
}

// failUnstarted fails the bridge tasks that no worker claimed within
// their schedule_to_start, by the database's clock, as no_worker: a
// retryable failure, retried by the step's policy.
func (c *Sweeper) failUnstarted(ctx context.Context, tx pgx.Tx, s *store.Store) (int, error) {
	tasks, err := s.BridgeTasksClaimUnstarted(ctx, sweepBatch)
	if err != nil {
		return 0, err
	}
	for _, t := range tasks {
		res := engine.StepResult{Node: t.Node, Generation: t.Generation, Attempt: t.Attempt, Error: &engine.Error{
			Code: CodeNoWorker, Retryable: true,
			Message: fmt.Sprintf("no worker claimed the task within %s: nothing polls queue %q for handler %q", t.ScheduleToStart, t.Queue, t.Handler),
		}}
		if err := c.w.Deliver(ctx, tx, t.TenantID, t.RunID, res); err != nil {
			return 0, err
		}
	}
	return len(tasks), nil
}

// CodeNoWorker fails a task that no worker claimed in time.
const CodeNoWorker = "no_worker"

func (c *Sweeper) enqueueDue(ctx context.Context, tx pgx.Tx, s *store.Store) (int, error) {
	due, err := s.DispatchesClaimDue(ctx, sweepBatch)
	if err != nil {
		return 0, err
	}
	jobs := make([]river.InsertManyParams, len(due))
	for i, d := range due {
		var args StepArgs
		if err := jsonvalue.Unmarshal(d.Args, &args); err != nil {
			return 0, fmt.Errorf("decode delayed step: %w", err)
		}
		jobs[i] = river.InsertManyParams{Args: args, InsertOpts: stepOpts(d.Queue)}
	}
	return len(due), c.w.insertSteps(ctx, tx, jobs, nil)
}

// rescueTicks ticks again the runs whose tick job has been running for
// longer than the rescue window (its process died mid-tick, leaving the
// run's inputs undrained and its wake flag cleared), and finalizes those
// jobs. The new tick is enqueued whatever the wake flag says: the flag may
// have been set for the very job that died.
func (c *Sweeper) rescueTicks(ctx context.Context, tx pgx.Tx, s *store.Store) (int, error) {
	runs, err := s.TickJobsRescue(ctx, c.RescueWindow, sweepBatch)
	if err != nil {
		return 0, err
	}
	for _, k := range runs {
		if _, err := s.RunRequestTick(ctx, k.TenantID, k.ID); err != nil {
			return 0, err
		}
		if err := c.enqueueTick(ctx, tx, k.TenantID, k.ID); err != nil {
			return 0, err
		}
	}
	if len(runs) > 0 {
		c.log.WarnContext(ctx, "rescued tick jobs running past the rescue window", "runs", len(runs))
	}
	return len(runs), nil
}
