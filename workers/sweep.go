package workers

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// sweepBatch bounds the timers and lost attempts one sweep handles; a
// sweep that fills a batch goes round again.
const sweepBatch = 500

// SweepWorker fires due timers and reports attempts whose worker died
// (lease expired without a result) as a retryable failure, so the engine
// retries them within the step's timeout plus the rescue window.
type SweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	C *Coordinator
}

// Timeout bounds one sweep.
func (w *SweepWorker) Timeout(*river.Job[SweepArgs]) time.Duration { return 30 * time.Second }

// Work drains due timers and lost attempts in batches.
func (w *SweepWorker) Work(ctx context.Context, _ *river.Job[SweepArgs]) error {
	for {
		n, err := w.C.sweepOnce(ctx)
		if err != nil || n < sweepBatch {
			return err
		}
	}
}

// sweepOnce handles one batch in one transaction and returns how many
// timers and attempts it claimed.
func (c *Coordinator) sweepOnce(ctx context.Context) (int, error) {
	var claimed int
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		timers, err := s.TimersClaimDue(ctx, sweepBatch)
		if err != nil {
			return err
		}
		for _, t := range timers {
			if err := c.Deliver(ctx, tx, t.TenantID, t.RunID, engine.TimerFired{TimerID: t.TimerID, Node: t.Node}); err != nil {
				return err
			}
		}
		lost, err := s.AttemptsClaimLost(ctx, sweepBatch)
		if err != nil {
			return err
		}
		for _, a := range lost {
			res := engine.StepResult{Node: a.Node, Generation: a.Generation, Attempt: a.Attempt, Error: &engine.Error{
				Code: "worker_lost", Message: fmt.Sprintf("the worker of attempt %d stopped answering", a.Attempt), Retryable: true,
			}}
			if err := c.Deliver(ctx, tx, a.TenantID, a.RunID, res); err != nil {
				return err
			}
		}
		claimed = max(len(timers), len(lost))
		return nil
	})
	return claimed, err
}

// SweepEvery is how often the sweep runs: the granularity of timers.
const SweepEvery = time.Second

// sweepJob is the periodic job that drives SweepWorker on the leader.
func sweepJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(SweepEvery),
		func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})
}
