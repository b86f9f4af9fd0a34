package sdk

import (
	"context"
	"net/http"
	"strings"
)

// Trace is a place in a distributed trace, as W3C Trace Context headers
// carry it. The SDK imports no tracing library: it passes these headers
// on, and hooks (WithTraceInjector, WorkerOptions.TraceContext) connect
// them to one, such as OpenTelemetry.
type Trace struct {
	Traceparent string // 00-TRACEID-SPANID-FLAGS
	Tracestate  string
}

// Valid reports whether t's traceparent is well formed: version 00, a
// trace id and a span id of hex digits, neither all zeros, and flags.
func (t Trace) Valid() bool {
	p := strings.Split(t.Traceparent, "-")
	return len(t.Traceparent) == 55 && len(p) == 4 && p[0] == "00" &&
		isHex(p[1], 32) && isHex(p[2], 16) && isHex(p[3], 2) &&
		strings.Trim(p[1], "0") != "" && strings.Trim(p[2], "0") != ""
}

// TraceID is the trace's id (32 hex digits), empty when t is not valid.
func (t Trace) TraceID() string {
	if !t.Valid() {
		return ""
	}
	return t.Traceparent[3:35]
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

type traceKey struct{}

// ContextWithTrace returns ctx carrying t: StartRun called with it starts
// the run in t's trace (unless the client has a trace injector). A
// handler's context carries its task's trace this way.
func ContextWithTrace(ctx context.Context, t Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// TraceFromContext is the trace ctx carries, from ContextWithTrace.
func TraceFromContext(ctx context.Context) (Trace, bool) {
	t, ok := ctx.Value(traceKey{}).(Trace)
	return t, ok && t.Valid()
}

// WithTraceInjector makes StartRun place each run in the caller's trace
// by the headers inject sets from the call's context: with
// OpenTelemetry, otel.GetTextMapPropagator().Inject(ctx,
// propagation.HeaderCarrier(h)). When it sets no traceparent, or without
// one, StartRun sends the trace of ContextWithTrace, if the context
// carries one.
func WithTraceInjector(inject func(ctx context.Context, h http.Header)) Option {
	return func(c *Client) { c.injectTrace = inject }
}

// setTrace sets the traceparent and tracestate headers of a request
// starting a run: the injector's, else ContextWithTrace's.
func (c *Client) setTrace(ctx context.Context, h http.Header) {
	if c.injectTrace != nil {
		c.injectTrace(ctx, h)
		if h.Get("traceparent") != "" {
			return
		}
	}
	if t, ok := TraceFromContext(ctx); ok {
		h.Set("traceparent", t.Traceparent)
		if t.Tracestate != "" {
			h.Set("tracestate", t.Tracestate)
		}
	}
}

// traceContext gives a handler's context the task's place in its run's
// trace: ContextWithTrace, then the worker's TraceContext hook.
func (w *Worker) traceContext(ctx context.Context, t Task) context.Context {
	tr := Trace{Traceparent: t.Traceparent, Tracestate: t.Tracestate}
	if !tr.Valid() {
		return ctx
	}
	ctx = ContextWithTrace(ctx, tr)
	if w.opts.TraceContext != nil {
		ctx = w.opts.TraceContext(ctx, tr)
	}
	return ctx
}
