package workers

import (
	"context"
	"time"

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

// startRetry is how long a step job whose start could not be recorded
// waits before it is offered again.
const startRetry = time.Second

// Work executes the attempt unless it already has a result.
func (w *StepWorker) Work(ctx context.Context, job *river.Job[StepArgs]) error {
	a := job.Args
	lease := time.Duration(a.TimeoutMS)*time.Millisecond + w.C.RescueWindow
	fresh, err := w.C.starts.start(a.attemptKey(), lease, a.Sparse)
	if err != nil {
		// Nothing ran and nothing is recorded: offer the job again rather
		// than let River discard its only attempt. (Snoozing costs it its
		// fair tag; the sweep puts it back at the head of its queue.)
		w.C.log.WarnContext(ctx, "could not record a step's start; offering it again", "run_id", a.RunID, "node", a.Node, "err", err)
		return river.JobSnooze(startRetry)
	}
	if !fresh {
		return nil // a duplicate delivery of an attempt that has its result
	}
	ctx, done := w.C.attemptBegins(ctx, job)
	out, stepErr := w.Executor.Execute(ctx, steps.Request{
		TenantID: a.TenantID.String(), RunID: a.RunID.String(), Node: a.Node, Ref: a.Ref, Type: a.Type,
		Generation: a.Generation, Attempt: a.Attempt, IdempotencyKey: a.IdempotencyKey,
		Params: a.Params, Timeout: time.Duration(a.TimeoutMS) * time.Millisecond,
	})
	done(stepErr)
	result := engine.StepResult{Node: a.Node, Generation: a.Generation, Attempt: a.Attempt, Output: out, Error: stepErr}
	return w.record(context.WithoutCancel(ctx), job, result)
}

// record hands the attempt's result to the coordinator's result group,
// which stores it with the results other workers hand over meanwhile,
// ticking each run right away when it is free (else the result waits for
// the run's tick job); the job is done and River's completer completes it.
// A job redelivered later finds its attempt finished and does nothing.
func (w *StepWorker) record(_ context.Context, job *river.Job[StepArgs], result engine.StepResult) error {
	a := job.Args
	return w.C.results.record(store.RunKey{TenantID: a.TenantID, ID: a.RunID}, result)
}
