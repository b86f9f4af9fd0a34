package workers

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
)

// StepWorker executes one attempt of a task or http step and, in one
// transaction, records its result for the run's next tick, wakes the run
// and completes its own job.
type StepWorker struct {
	river.WorkerDefaults[StepArgs]
	C        *Coordinator
	Executor *steps.Executor
}

// Timeout lets the executor enforce the step's own timeout first; River's
// is a backstop a little later.
func (w *StepWorker) Timeout(job *river.Job[StepArgs]) time.Duration {
	if job.Args.TimeoutMS <= 0 {
		return -1
	}
	return time.Duration(job.Args.TimeoutMS)*time.Millisecond + 10*time.Second
}

// Work executes the attempt unless it already has a result.
func (w *StepWorker) Work(ctx context.Context, job *river.Job[StepArgs]) error {
	a := job.Args
	s := store.New(w.C.pool)
	lease := time.Duration(a.TimeoutMS)*time.Millisecond + w.C.RescueWindow
	fresh, err := s.AttemptStart(ctx, a.TenantID, a.RunID, a.Node, a.Generation, a.Attempt, lease)
	if err != nil {
		return err
	}
	if !fresh {
		return nil // a duplicate delivery of an attempt that has its result
	}
	started := time.Now()
	out, stepErr := w.Executor.Execute(ctx, steps.Request{
		TenantID: a.TenantID.String(), RunID: a.RunID.String(), Node: a.Node, Ref: a.Ref, Type: a.Type,
		Generation: a.Generation, Attempt: a.Attempt, IdempotencyKey: a.IdempotencyKey,
		Params: a.Params, Timeout: time.Duration(a.TimeoutMS) * time.Millisecond,
	})
	outcome := "success"
	if stepErr != nil {
		outcome = stepErr.Code
	}
	w.C.metrics.stepSeconds.WithLabelValues(a.Type, outcome).Observe(time.Since(started).Seconds())
	result := engine.StepResult{Node: a.Node, Generation: a.Generation, Attempt: a.Attempt, Output: out, Error: stepErr}
	return w.record(context.WithoutCancel(ctx), job, result)
}

// errBusy says an inline tick found its run busy: the result goes to the
// run's tick job instead.
var errBusy = errors.New("run busy")

// record stores the attempt's result and completes the job in one
// transaction: ticking the run right there when it is free, else, in a
// fresh transaction, storing the result and waking the run's tick job.
func (w *StepWorker) record(ctx context.Context, job *river.Job[StepArgs], result engine.StepResult) error {
	a := job.Args
	err := pgx.BeginFunc(ctx, w.C.pool, func(tx pgx.Tx) error {
		ticked, err := w.C.tickLocked(ctx, tx, a.TenantID, a.RunID, result)
		if err != nil {
			return err
		}
		if !ticked {
			return errBusy
		}
		return nil
	})
	if err == nil {
		return nil
	}
	if !errors.Is(err, errBusy) && !errors.Is(err, store.ErrConflict) {
		w.C.log.WarnContext(ctx, "inline tick failed; handing over to a tick job", "run_id", a.RunID, "err", err)
	}
	return pgx.BeginFunc(ctx, w.C.pool, func(tx pgx.Tx) error {
		return w.C.Deliver(ctx, tx, a.TenantID, a.RunID, result)
	})
}
