package workers

import (
	"context"
	"errors"
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
// waits before it is offered again. (The sweep puts a snoozed step job
// back at the head of its queue by the database's clock sooner.)
const startRetry = time.Second

// errStartTooLate is a start that came after the sweep could report the
// job stranded: River discards the job, and the sweep reports the attempt
// lost (once) and retries the step.
var errStartTooLate = errors.New("the step's start came after its job could be reported stranded; the sweep retries the attempt")

// Work executes the attempt unless it already has a result.
func (w *StepWorker) Work(ctx context.Context, job *river.Job[StepArgs]) error {
	a := job.Args
	lease := time.Duration(a.TimeoutMS)*time.Millisecond + w.C.RescueWindow
	take := store.AttemptTake{Key: a.attemptKey(), Lease: lease, By: startBy(job, w.C.RescueWindow)}
	outcome, leased, err := w.C.starts.start(ctx, take, a.Sparse, time.Now().Add(w.C.RescueWindow))
	if err != nil {
		// Nothing ran and nothing is recorded: offer the job again rather
		// than let River discard its only attempt. (Snoozing costs it its
		// fair tag; the sweep puts it back at the head of its queue.)
		w.C.log.WarnContext(ctx, "could not record a step's start; offering it again", "run_id", a.RunID, "node", a.Node, "err", err)
		return river.JobSnooze(startRetry)
	}
	switch outcome {
	case store.Finished:
		return nil // a duplicate delivery of an attempt that has its result
	case store.TooLate:
		return errStartTooLate
	}
	ctx, done := w.C.attemptBegins(ctx, job)
	out, stepErr := w.Executor.Execute(ctx, steps.Request{
		TenantID: a.TenantID.String(), RunID: a.RunID.String(), Node: a.Node, Ref: a.Ref, Type: a.Type,
		Generation: a.Generation, Attempt: a.Attempt, IdempotencyKey: a.IdempotencyKey,
		Params: a.Params, Timeout: time.Duration(a.TimeoutMS) * time.Millisecond,
	})
	done(stepErr)
	result := engine.StepResult{Node: a.Node, Generation: a.Generation, Attempt: a.Attempt, Output: out, Error: stepErr}
	return w.C.results.record(store.RunKey{TenantID: a.TenantID, ID: a.RunID}, result, leased.Add(lease))
}

// startBy is when the sweep may report the job stranded if its attempt
// has not started (StepJobsClaimStranded): River's attempted_at, the
// database's clock at the fetch, plus the rescue window. A start recorded
// from then on is refused, so that a step is never both executed here and
// reported lost.
func startBy(job *river.Job[StepArgs], window time.Duration) time.Time {
	if job.AttemptedAt == nil {
		return time.Time{}
	}
	return job.AttemptedAt.Add(window)
}
