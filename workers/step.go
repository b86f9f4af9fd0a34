package workers

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
)

// StepWorker executes one attempt of a task or http step (or of each
// step of a step batch) and hands its result over, to be recorded for the
// run's next tick.
type StepWorker struct {
	river.WorkerDefaults[shell.StepArgs]
	C        *shell.Steps
	Executor *steps.Executor
}

// Timeout lets the executor enforce the step's own timeout first; River's
// is a backstop a little later (a batch's: its longest step's).
func (w *StepWorker) Timeout(job *river.Job[shell.StepArgs]) time.Duration {
	var longest int64
	for _, a := range job.Args.Members() {
		if a.TimeoutMS <= 0 {
			return -1
		}
		longest = max(longest, a.TimeoutMS)
	}
	return time.Duration(longest)*time.Millisecond + 10*time.Second
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
func (w *StepWorker) Work(ctx context.Context, job *river.Job[shell.StepArgs]) error {
	if len(job.Args.More) > 0 {
		return w.workBatch(ctx, job)
	}
	a := job.Args
	// Watched before its start is recorded, as a batch's steps are, so
	// that a cancel committed after the start ends the step's context.
	ctxs, releases, err := w.C.Watch(ctx, []store.AttemptKey{a.AttemptKey()})
	if err != nil {
		w.C.Log().WarnContext(ctx, "could not watch a step for cancels; offering it again", "run_id", a.RunID, "node", a.Node, "err", err)
		return river.JobSnooze(startRetry)
	}
	defer releases[0]()
	outcome, until, err := w.take(ctx, job, a)
	if err != nil {
		// Nothing ran and nothing is recorded: offer the job again rather
		// than let River discard its only attempt. (Snoozing costs it its
		// fair tag; the sweep puts it back at the head of its queue.)
		w.C.Log().WarnContext(ctx, "could not record a step's start; offering it again", "run_id", a.RunID, "node", a.Node, "err", err)
		return river.JobSnooze(startRetry)
	}
	switch outcome {
	case store.Finished:
		return nil // a duplicate delivery of an attempt that has its result
	case store.TooLate:
		return errStartTooLate
	}
	_, err = w.execute(ctxs[0], job, a, until)
	return err
}

// workBatch runs the steps of a step batch side by side, each as it would
// run in a job of its own: taken through the grouped start, executed
// unless refused, its result handed over. Each runs in a context of its
// own that a cancel of its attempt ends (stepCancels), since River's
// cancel would end them all. A step whose start could not be recorded
// offers the job again, but only once the results of the steps that ran
// are recorded: the job delivered again skips those (they have their
// result) instead of running them twice.
func (w *StepWorker) workBatch(ctx context.Context, job *river.Job[shell.StepArgs]) error {
	members := job.Args.Members()
	keys := make([]store.AttemptKey, len(members))
	for i, a := range members {
		keys[i] = a.AttemptKey()
	}
	ctxs, releases, err := w.C.Watch(ctx, keys)
	if err != nil {
		w.C.Log().WarnContext(ctx, "could not watch a step batch for cancels; offering it again", "run_id", job.Args.RunID, "steps", len(members), "err", err)
		return river.JobSnooze(startRetry)
	}
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		unstarted, late bool
		recorded        []<-chan struct{}
		errs            []error
	)
	for i, a := range members {
		wg.Go(func() {
			defer releases[i]()
			outcome, until, err := w.take(ctx, job, a)
			if err == nil && outcome == store.Taken {
				done, err := w.execute(ctxs[i], job, a, until)
				mu.Lock()
				recorded, errs = append(recorded, done), append(errs, err)
				mu.Unlock()
				return
			}
			if err != nil {
				w.C.Log().WarnContext(ctx, "could not record a step's start; offering it again", "run_id", a.RunID, "node", a.Node, "err", err)
			}
			mu.Lock()
			unstarted = unstarted || err != nil
			late = late || (err == nil && outcome == store.TooLate)
			mu.Unlock()
		})
	}
	wg.Wait()
	switch {
	case late:
		return errStartTooLate
	case unstarted:
		for _, done := range recorded {
			select {
			case <-done:
			case <-ctx.Done():
			}
		}
		return river.JobSnooze(startRetry)
	}
	return errors.Join(errs...)
}

// take records the start of attempt a, one the job carries, and returns
// what became of it and until when its lease runs at least.
func (w *StepWorker) take(ctx context.Context, job *river.Job[shell.StepArgs], a shell.StepArgs) (store.TakeOutcome, time.Time, error) {
	lease := shell.AttemptLease(a, w.C.RescueWindow())
	take := store.AttemptTake{Key: a.AttemptKey(), Lease: lease, By: startBy(job, w.C.RescueWindow()), Input: a.KeptInput(), StepType: a.Type}
	outcome, leased, err := w.C.Take(ctx, take, a.Sparse, time.Now().Add(w.C.RescueWindow()))
	return outcome, leased.Add(lease), err
}

// execute runs a taken attempt and hands its result over, to be offered
// until until; the channel closes once it is recorded or given up on.
func (w *StepWorker) execute(ctx context.Context, job *river.Job[shell.StepArgs], a shell.StepArgs, until time.Time) (<-chan struct{}, error) {
	ctx, done := w.C.Begin(ctx, job, a)
	out, stepErr := w.Executor.Execute(ctx, stepRequest(a))
	done(stepErr)
	result := engine.StepResult{Node: a.Node, Generation: a.Generation, Attempt: a.Attempt, Output: out, Error: stepErr}
	return w.C.HandOver(store.RunKey{TenantID: a.TenantID, ID: a.RunID}, result, until)
}

// stepRequest is what the executor is given for attempt a, from a River
// job or a local step alike.
func stepRequest(a shell.StepArgs) steps.Request {
	return steps.Request{
		TenantID: a.TenantID.String(), RunID: a.RunID.String(), Node: a.Node, Ref: a.Ref, Type: a.Type,
		Generation: a.Generation, Attempt: a.Attempt, IdempotencyKey: a.IdempotencyKey,
		Params: a.Params, Timeout: time.Duration(a.TimeoutMS) * time.Millisecond,
	}
}

// localRun runs local steps with x, as a step worker would.
func localRun(x *steps.Executor) func(context.Context, shell.StepArgs) (any, *engine.Error) {
	return func(ctx context.Context, a shell.StepArgs) (any, *engine.Error) {
		return x.Execute(ctx, stepRequest(a))
	}
}

// startBy is when the sweep may report the job stranded if its attempt
// has not started (StepJobsClaimStranded): River's attempted_at, the
// database's clock at the fetch, plus the rescue window. A start recorded
// from then on is refused, so that a step is never both executed here and
// reported lost.
func startBy(job *river.Job[shell.StepArgs], window time.Duration) time.Time {
	if job.AttemptedAt == nil {
		return time.Time{}
	}
	return job.AttemptedAt.Add(window)
}
