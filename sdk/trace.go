package sdk

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

// withTaskTrace gives a handler's context the task's place in its run's
// trace, as a remote span context: trace.SpanContextFromContext(ctx) reads
// it, and an OpenTelemetry tracer starts the handler's spans as its
// children.
func withTaskTrace(ctx context.Context, t Task) context.Context {
	if t.Traceparent == "" {
		return ctx
	}
	carrier := propagation.MapCarrier{"traceparent": t.Traceparent, "tracestate": t.Tracestate}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}
