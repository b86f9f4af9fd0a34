package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Task is one attempt of a task step, as a handler receives it.
type Task struct {
	ID      string `json:"id"`
	Token   string `json:"token"`
	Handler string `json:"handler"`
	Queue   string `json:"queue"`
	// Input is the step's evaluated input (its input_expr, or the run's
	// input) as JSON; see Decode.
	Input   json.RawMessage `json:"input"`
	Attempt int             `json:"attempt"`
	// IdempotencyKey names the logical operation: the same for every
	// automatic retry of the step, so a receiver can recognise a retry of
	// something that already happened.
	IdempotencyKey string `json:"idempotency_key"`
	// Deadline and LeaseUntil are by the server's database clock.
	Deadline   *time.Time `json:"deadline"`
	LeaseUntil *time.Time `json:"lease_until"`
	// DeadlineMS and LeaseMS are what was left of them when the task was
	// claimed. The worker times the deadline and the lease from when it
	// received the task, not by comparing Deadline and LeaseUntil with its
	// own clock, which may differ from the database's.
	DeadlineMS *int64 `json:"deadline_ms"`
	LeaseMS    *int64 `json:"lease_ms"`
	RunID      string `json:"run_id"`
	Node       string `json:"node"`
	// Traceparent and Tracestate place the attempt in its run's trace (W3C
	// Trace Context); the handler's context carries them, so spans an
	// OpenTelemetry tracer starts from it join the run's trace.
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
	// Secrets are the values of the tenant secrets the step declares
	// (`secrets: [NAME, …]` on a task step), by name. They come with the
	// claimed task and are never part of its stored input: keep them out of
	// the output and of what the handler logs.
	Secrets map[string]string `json:"secrets,omitempty"`

	received time.Time // when the worker received the task, on its monotonic clock
}

// deadline is when the task's deadline passes on this process's clock.
func (t Task) deadline() (time.Time, bool) {
	return t.local(t.DeadlineMS, t.Deadline)
}

// leaseEnd is when the lease the task was claimed with runs out on this
// process's clock.
func (t Task) leaseEnd() (time.Time, bool) {
	return t.local(t.LeaseMS, t.LeaseUntil)
}

// local places a moment the server gave as ms after the claim on this
// process's clock, from when the task was received; a server that sent only
// the moment itself is taken at its word.
func (t Task) local(ms *int64, at *time.Time) (time.Time, bool) {
	switch {
	case ms != nil && !t.received.IsZero():
		return t.received.Add(time.Duration(*ms) * time.Millisecond), true
	case at != nil:
		return *at, true
	}
	return time.Time{}, false
}

// Decode unmarshals the task's input into v.
func (t Task) Decode(v any) error {
	if err := json.Unmarshal(t.Input, v); err != nil {
		return fmt.Errorf("decode input of task %s: %w", t.Handler, err)
	}
	return nil
}

// Error is a task failure with a code and a retryability. Any other error
// a handler returns fails the attempt as a retryable task_failed.
type Error struct {
	Code      string
	Message   string
	Retryable bool
}

func (e *Error) Error() string { return e.Message }

// Permanent marks err as not worth retrying: the step fails at once.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	code := "task_failed"
	var e *Error
	if errors.As(err, &e) {
		code = e.Code
	}
	return &Error{Code: code, Message: err.Error(), Retryable: false}
}

// ErrTaskLost is the cause of a handler's context when the server no
// longer wants its task: it was cancelled, or its lease ran out.
var ErrTaskLost = errors.New("ductor: the task was cancelled or its lease was lost")

// Causes of a handler's context: shutdown and the task's deadline.
var (
	errReleased = errors.New("ductor: the worker is shutting down")
	errDeadline = errors.New("ductor: the task's deadline passed")
)

// execute runs one task: the handler under heartbeats, then its result.
// A handler that ignores its context is abandoned once the context ends.
func (w *Worker) execute(ctx context.Context, t Task) {
	hctx, cancel := w.taskContext(ctx, t)
	defer cancel(nil)
	stopBeat := w.heartbeat(hctx, cancel, t)
	out, err := w.call(w.traceContext(hctx, t), t)
	stopBeat()
	if errors.Is(context.Cause(hctx), ErrTaskLost) {
		return // nobody wants the answer
	}
	if err != nil && hctx.Err() != nil {
		err = interrupted{err: err, cause: context.Cause(hctx)}
	}
	w.report(ctx, t, out, err)
}

// interrupted is a handler's error while its context had ended: the
// context's cause decides the failure's code.
type interrupted struct{ err, cause error }

func (i interrupted) Error() string   { return i.err.Error() }
func (i interrupted) Unwrap() []error { return []error{i.err, i.cause} }

func (w *Worker) taskContext(ctx context.Context, t Task) (context.Context, context.CancelCauseFunc) {
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancel(errReleased) })
	deadline, ok := t.deadline()
	if !ok {
		return hctx, func(cause error) { stop(); cancel(cause) }
	}
	dctx, dcancel := context.WithDeadlineCause(hctx, deadline, errDeadline)
	return dctx, func(cause error) { stop(); dcancel(); cancel(cause) }
}

type handlerResult struct {
	out any
	err error
}

// call runs the handler on its own goroutine, turning a panic into a
// retryable failure, and gives up on it when its context ends.
func (w *Worker) call(ctx context.Context, t Task) (any, error) {
	h, ok := w.handler(t.Handler)
	if !ok {
		return nil, &Error{Code: "unknown_handler", Message: fmt.Sprintf("no handler %q on worker %s", t.Handler, w.opts.ID)}
	}
	res := make(chan handlerResult, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				res <- handlerResult{err: &Error{Code: "panic", Message: fmt.Sprintf("handler panicked: %v", v), Retryable: true}}
			}
		}()
		out, err := h(ctx, t)
		res <- handlerResult{out, err}
	}()
	select {
	case r := <-res:
		return r.out, r.err
	case <-ctx.Done():
		select {
		case r := <-res:
			return r.out, r.err
		default:
			return nil, context.Cause(ctx)
		}
	}
}

// heartbeat extends the task's lease until the returned function is
// called. A 404 or 409 means the task is no longer wanted: the handler's
// context is cancelled with ErrTaskLost.
func (w *Worker) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, t Task) func() {
	ctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(w.heartbeatEvery(t))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			err := w.taskCall(ctx, t, "heartbeat", map[string]string{"token": t.Token})
			if IsStatus(err, http.StatusConflict) || IsStatus(err, http.StatusNotFound) {
				cancel(ErrTaskLost)
				return
			}
			if err != nil && ctx.Err() == nil {
				w.opts.Logger.WarnContext(ctx, "ductor worker: heartbeat failed", "task", t.ID, "err", err)
			}
		}
	}()
	return func() { stop(); <-done }
}

func (w *Worker) heartbeatEvery(t Task) time.Duration {
	if w.opts.HeartbeatEvery > 0 {
		return w.opts.HeartbeatEvery
	}
	end, ok := t.leaseEnd()
	if !ok {
		return 10 * time.Second
	}
	return min(max(time.Until(end)/3, 50*time.Millisecond), 10*time.Second)
}

type failBody struct {
	Token string `json:"token"`
	Error struct {
		Code      string `json:"code,omitempty"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	} `json:"error"`
}

// MaxOutputBytes is the largest output a step takes, as JSON; a handler
// returning more fails the step as payload_too_large (not retried).
const MaxOutputBytes = 1 << 20

// report completes or fails the task, retrying while the server is
// unavailable and the task's lease may still hold.
func (w *Worker) report(ctx context.Context, t Task, out any, err error) {
	verb, body := "complete", any(nil)
	if err == nil {
		raw, merr := json.Marshal(out)
		switch {
		case merr != nil:
			err = &Error{Code: "invalid_output", Message: "output is not JSON: " + merr.Error()}
		case len(raw) > MaxOutputBytes:
			err = &Error{Code: "payload_too_large", Message: fmt.Sprintf("output is %d bytes of JSON, over the %d-byte limit", len(raw), MaxOutputBytes)}
		default:
			body = map[string]any{"token": t.Token, "output": json.RawMessage(raw)}
		}
	}
	if err != nil {
		verb, body = "fail", failure(t, err)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.reportFor(t))
	defer cancel()
	b := backoff{min: w.opts.MinBackoff, max: w.opts.MaxBackoff}
	for {
		err := w.taskCall(rctx, t, verb, body)
		if err == nil || !retryable(err) || !sleepCtx(rctx, max(b.delay(), retryAfterOf(err))) {
			if err != nil {
				w.opts.Logger.WarnContext(ctx, "ductor worker: result not delivered", "task", t.ID, "verb", verb, "err", err)
			}
			return
		}
	}
}

// minReport is the least time a result is offered for: a slow answer
// from a loaded server is no reason to drop it.
const minReport = 10 * time.Second

// reportFor is how long a result is offered for: while the task's lease
// may hold, three backoffs, and at least minReport.
func (w *Worker) reportFor(t Task) time.Duration {
	d := max(w.opts.MaxBackoff*3, minReport)
	if end, ok := t.leaseEnd(); ok {
		d = max(d, time.Until(end))
	}
	return d
}

// failure is the fail body of a handler's error; a cancellation at
// shutdown or a deadline is retryable.
func failure(t Task, err error) failBody {
	f := failBody{Token: t.Token}
	f.Error.Code, f.Error.Message, f.Error.Retryable = "task_failed", err.Error(), true
	var e *Error
	switch {
	case errors.As(err, &e):
		f.Error.Code, f.Error.Retryable = e.Code, e.Retryable
	case errors.Is(err, errReleased):
		f.Error.Code = "worker_stopped"
	case errors.Is(err, errDeadline), errors.Is(err, context.DeadlineExceeded):
		f.Error.Code = "timeout"
	}
	return f
}

func (w *Worker) taskCall(ctx context.Context, t Task, verb string, body any) error {
	_, err := w.c.do(ctx, http.MethodPost, "/tasks/"+url.PathEscape(t.ID)+"/"+verb, body, nil)
	return err
}
