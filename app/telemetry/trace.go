// Package telemetry is Ductor's OpenTelemetry tracing and its process
// metrics (build info, connection pool).
//
// Tracing is off unless an OTLP endpoint is configured by the standard
// variables (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); then spans go to it over
// OTLP/HTTP, and the SDK reads the other OTEL_* variables itself (headers,
// timeout, sampler, service name, resource attributes).
//
// A run is one span of a trace: the caller's when POST /runs carried a
// traceparent, the parent run's for a child, else a trace of its own. A
// run outlives the process that started it, so its span cannot be held
// open: its identity is chosen when the run is created and kept on the run
// (engine.TraceContext); every tick and attempt span, in any process, is a
// child of that span; and the run's own span is exported, with that
// identity and the run's start and end times, by the tick that ends it.
// The identity is kept and sent (traceparent) also when tracing is off, so
// logs carry trace ids and a caller's trace passes through.
package telemetry

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/version"
)

// Tracing makes Ductor's spans. The zero value and Disabled() make none.
type Tracing struct {
	tracer   trace.Tracer
	provider *sdktrace.TracerProvider
}

// Disabled returns tracing that exports nothing.
func Disabled() *Tracing { return &Tracing{} }

// Setup configures tracing from the OTEL_* variables getenv reads: off
// (Disabled) unless an OTLP endpoint is set, OTEL_SDK_DISABLED is not
// true and OTEL_TRACES_EXPORTER is not none.
func Setup(ctx context.Context, getenv func(string) string) (*Tracing, error) {
	endpoint := tracesEndpoint(getenv)
	if endpoint == "" || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return Disabled(), nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "ductor"), attribute.String("service.version", version.String())),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(presetIDs{}))
	return &Tracing{tracer: tp.Tracer("github.com/ductor/ductor"), provider: tp}, nil
}

// tracesEndpoint is the OTLP/HTTP URL spans go to, or empty.
func tracesEndpoint(getenv func(string) string) string {
	if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		return u
	}
	if u := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		return strings.TrimSuffix(u, "/") + "/v1/traces"
	}
	return ""
}

// Enabled reports whether spans are exported.
func (t *Tracing) Enabled() bool { return t != nil && t.provider != nil }

// Shutdown exports the spans still buffered and stops.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

func (t *Tracing) tr() trace.Tracer {
	if t.Enabled() {
		return t.tracer
	}
	return noop.NewTracerProvider().Tracer("")
}

// NewRun chooses the span of a new run: a child of parent when it is valid
// (the caller's span, or the parent run's), else the root of a new trace.
// With tracing on the sampler decides whether it is recorded; with it off
// the parent's decision is kept (a new trace is not sampled).
func (t *Tracing) NewRun(ctx context.Context, parent trace.SpanContext) *engine.TraceContext {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: parent.TraceID(), SpanID: newSpanID(), TraceFlags: parent.TraceFlags(), TraceState: parent.TraceState(),
	})
	if !parent.IsValid() {
		sc = sc.WithTraceID(newTraceID()).WithTraceFlags(0)
	}
	if t.Enabled() {
		_, span := t.tracer.Start(withPreset(trace.ContextWithRemoteSpanContext(ctx, parent), sc), "run")
		sc = sc.WithTraceFlags(span.SpanContext().TraceFlags()) // never ended: only the sampler's decision is kept
	}
	tc := &engine.TraceContext{Parent: Traceparent(sc), State: sc.TraceState().String()}
	if parent.IsValid() {
		tc.Caller = parent.SpanID().String()
	}
	return tc
}

// ChildRun chooses the span of a run started by the run of tc.
func (t *Tracing) ChildRun(ctx context.Context, tc *engine.TraceContext) *engine.TraceContext {
	return t.NewRun(ctx, SpanContext(tc))
}

// SpanContext is the run's span as a remote span context (invalid when tc
// is nil or malformed).
func SpanContext(tc *engine.TraceContext) trace.SpanContext {
	if tc == nil {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{"traceparent": tc.Parent, "tracestate": tc.State}
	return trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
}

// TraceID is the run's trace id, or empty.
func TraceID(tc *engine.TraceContext) string {
	if sc := SpanContext(tc); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// Traceparent is sc as a W3C traceparent header value.
func Traceparent(sc trace.SpanContext) string {
	return fmt.Sprintf("00-%s-%s-%s", sc.TraceID(), sc.SpanID(), sc.TraceFlags())
}

// InRun returns ctx with the run's span as the remote parent of the spans
// started from it.
func InRun(ctx context.Context, tc *engine.TraceContext) context.Context {
	if sc := SpanContext(tc); sc.IsValid() {
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return ctx
}

// Start starts a span as a child of the run's (an attempt, say); with
// tracing off the span is not recorded but carries the run's context, so
// it is still propagated.
func (t *Tracing) Start(ctx context.Context, tc *engine.TraceContext, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return t.tr().Start(InRun(ctx, tc), name, opts...)
}

// Record exports a finished span of the run that began at start and ended
// at end (a tick, an attempt a bridge worker ran). With id valid, the span
// takes that identity (one chosen before it began and handed out meanwhile).
func (t *Tracing) Record(ctx context.Context, tc *engine.TraceContext, id trace.SpanID, name string, start, end time.Time, err error, attrs ...attribute.KeyValue) {
	if !t.Enabled() {
		return
	}
	parent := InRun(ctx, tc)
	if id.IsValid() {
		run := SpanContext(tc)
		parent = withPreset(parent, run.WithSpanID(id))
	}
	t.record(parent, name, start, end, err, attrs)
}

// EndRun exports the run's own span, from its creation to its end, as a
// child of what started it.
func (t *Tracing) EndRun(ctx context.Context, tc *engine.TraceContext, name string, start, end time.Time, err error, attrs ...attribute.KeyValue) {
	run := SpanContext(tc)
	if !t.Enabled() || !run.IsValid() {
		return
	}
	parent := ctx
	if caller, cerr := trace.SpanIDFromHex(tc.Caller); cerr == nil {
		parent = trace.ContextWithRemoteSpanContext(ctx, run.WithSpanID(caller))
	}
	t.record(withPreset(parent, run), name, start, end, err, attrs)
}

func (t *Tracing) record(ctx context.Context, name string, start, end time.Time, err error, attrs []attribute.KeyValue) {
	_, span := t.tracer.Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End(trace.WithTimestamp(end))
}

// AttemptSpanID is the span id of the bridge task with id: chosen from the
// task's own (random) id, so the traceparent handed to its worker and the
// span exported when it answers agree without storing anything more.
func AttemptSpanID(id [16]byte) trace.SpanID {
	var s trace.SpanID
	copy(s[:], id[8:])
	if !s.IsValid() {
		s[7] = 1
	}
	return s
}

// AttemptTraceparent is the W3C traceparent (and tracestate) a bridge
// worker is handed with the task: the attempt's span in the run's trace,
// empty when the run has none.
func AttemptTraceparent(tc *engine.TraceContext, task [16]byte) (string, string) {
	sc := SpanContext(tc)
	if !sc.IsValid() {
		return "", ""
	}
	return Traceparent(sc.WithSpanID(AttemptSpanID(task))), tc.State
}
