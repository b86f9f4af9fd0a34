package steps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
	"unicode/utf8"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
)

// DefaultMaxOutputBytes caps an attempt's output, measured as JSON: the
// cap of every node output.
const DefaultMaxOutputBytes = engine.DefaultMaxOutputBytes

// maxMessageBytes caps an error message, so a handler cannot blow up the
// attempt record through its error text.
const maxMessageBytes = 4 << 10

// Request is one attempt of a worker step, as the step worker received it
// from an [engine.DispatchAttempt].
type Request struct {
	TenantID, RunID, Node, Ref string
	Type                       string // "task" or "http"
	Generation, Attempt        int
	IdempotencyKey             string // the same for automatic retries of a node
	Params                     map[string]any
	Timeout                    time.Duration // per attempt; 0 means none
}

// Executor executes attempts of task and http steps. It is safe for
// concurrent use; build one per process.
type Executor struct {
	reg       *Registry
	client    *http.Client
	maxBody   int64
	maxOutput int
	log       *slog.Logger
	secrets   SecretSource
}

// Option configures an [Executor].
type Option func(*Executor)

// WithLogger sets where recovered panics are logged with their stack.
// Without it they are not logged (the attempt still records the panic).
func WithLogger(l *slog.Logger) Option { return func(x *Executor) { x.log = l } }

// WithMaxOutputBytes sets the output cap (default [DefaultMaxOutputBytes]);
// n <= 0 keeps the default.
func WithMaxOutputBytes(n int) Option {
	return func(x *Executor) {
		if n > 0 {
			x.maxOutput = n
		}
	}
}

// NewExecutor returns an executor running task steps from reg and http
// steps through an SSRF-guarded client configured by opts.
func NewExecutor(reg *Registry, opts HTTPOptions, options ...Option) *Executor {
	x := &Executor{
		reg:       reg,
		client:    newHTTPClient(opts.Allow),
		maxBody:   opts.MaxResponseBytes,
		maxOutput: DefaultMaxOutputBytes,
		log:       slog.New(slog.DiscardHandler),
	}
	if x.maxBody <= 0 {
		x.maxBody = DefaultMaxResponseBytes
	}
	for _, o := range options {
		o(x)
	}
	return x
}

// Execute runs one attempt and returns its JSON-normalised output, or the
// error to record. It returns when the attempt ends or its deadline
// passes, whichever is first: a handler that ignores ctx is abandoned (its
// goroutine runs on until it returns) and the attempt fails as timeout.
// Panics fail the attempt as panic. An http_status error comes with the
// response as output, for the attempt record.
func (x *Executor) Execute(ctx context.Context, req Request) (output any, err *engine.Error) {
	ctx, cancel := attemptContext(ctx, req.Timeout)
	defer cancel()
	res := make(chan result, 1)
	go x.attempt(ctx, req, res)
	select {
	case r := <-res:
		return x.finish(ctx, r)
	case <-ctx.Done():
		select {
		case r := <-res:
			return x.finish(ctx, r)
		default:
			return nil, contextError(ctx)
		}
	}
}

type result struct {
	out any
	err error
}

// errAttemptTimeout is the cause of an attempt context's deadline.
type errAttemptTimeout time.Duration

func (e errAttemptTimeout) Error() string {
	return fmt.Sprintf("attempt timed out after %s", time.Duration(e))
}

func attemptContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, errAttemptTimeout(timeout))
}

func contextError(ctx context.Context) *engine.Error {
	cause := context.Cause(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &engine.Error{Code: CodeTimeout, Message: cause.Error(), Retryable: true}
	}
	return &engine.Error{Code: CodeCancelled, Message: "attempt cancelled: " + cause.Error(), Retryable: true}
}

// attempt runs the step on its own goroutine and always sends one result,
// also when the handler panics or calls runtime.Goexit.
func (x *Executor) attempt(ctx context.Context, req Request, res chan<- result) {
	returned := false
	defer func() {
		if !returned {
			res <- result{err: x.panicked(req, recover())}
		}
	}()
	out, err := x.run(ctx, req)
	returned = true
	res <- result{out, err}
}

func (x *Executor) panicked(req Request, v any) error {
	msg := fmt.Sprintf("handler panicked: %v", v)
	if v == nil {
		msg = "handler exited without returning (runtime.Goexit)"
	}
	x.log.Error("step attempt panicked", "tenant_id", req.TenantID, "run_id", req.RunID,
		"node", req.Node, "attempt", req.Attempt, "panic", v, "stack", string(debug.Stack()))
	return &Error{Code: CodePanic, Message: msg, Retryable: true}
}

func (x *Executor) run(ctx context.Context, req Request) (any, error) {
	switch definition.StepType(req.Type) {
	case definition.TypeTask:
		return x.runTask(ctx, req)
	case definition.TypeHTTP:
		return x.runHTTP(ctx, req)
	}
	return nil, failf(CodeInvalidStep, "step type %q does not run on a step worker", req.Type)
}

func (x *Executor) runTask(ctx context.Context, req Request) (any, error) {
	name, _ := req.Params["handler"].(string)
	if name == "" {
		return nil, failf(CodeInvalidStep, "task step has no handler")
	}
	h, ok := x.reg.Lookup(name)
	if !ok {
		return nil, failf(CodeUnknownHandler, "no handler %q is registered", name)
	}
	return h(ctx, Call{
		TenantID: req.TenantID, RunID: req.RunID, Node: req.Node, Attempt: req.Attempt,
		IdempotencyKey: req.IdempotencyKey, Input: req.Params["input"],
	})
}

// finish turns a result into Execute's answer. An error while the
// attempt's context is done is reported as the timeout or cancellation
// that most likely caused it.
func (x *Executor) finish(ctx context.Context, r result) (any, *engine.Error) {
	if r.err != nil {
		if ctx.Err() != nil {
			return nil, contextError(ctx)
		}
		out, _ := x.normalise(r.out) // best effort: kept only if it fits
		e := toEngine(r.err)
		e.Message = truncate(e.Message, maxMessageBytes)
		return out, e
	}
	return x.normalise(r.out)
}

// normalise returns v in the JSON value model (what decoding its JSON
// gives), enforcing the cap; a value that cannot be stored (a NUL
// character, a NaN) is invalid_output.
func (x *Executor) normalise(v any) (any, *engine.Error) {
	out, _, err := jsonvalue.Check(v, x.maxOutput)
	switch {
	case err == nil:
		return out, nil
	case jsonvalue.IsTooLarge(err):
		return nil, &engine.Error{Code: CodePayloadTooLarge, Message: "output " + err.Error()}
	}
	return nil, &engine.Error{Code: CodeInvalidOutput, Message: "output cannot be stored: " + err.Error()}
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Handles reports whether this process has a Go handler named name. A task
// step whose handler it lacks is run by a tenant's bridge-SDK worker.
func (x *Executor) Handles(name string) bool {
	_, ok := x.reg.Lookup(name)
	return ok
}
