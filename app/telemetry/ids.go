package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// presetIDs is the tracer provider's ID generator: random ids, except for
// a span started from a context carrying a preset identity (withPreset),
// which takes it. That is how a run's span, whose identity was handed out
// when the run began, is exported when it ends.
type presetIDs struct{}

type presetKey struct{}

// withPreset makes the next span started from ctx take sc's trace and
// span ids. Only spans that are ended at once may be started from it: any
// span started from the context it returns would take them too.
func withPreset(ctx context.Context, sc trace.SpanContext) context.Context {
	return context.WithValue(ctx, presetKey{}, sc)
}

func preset(ctx context.Context) (trace.SpanContext, bool) {
	sc, ok := ctx.Value(presetKey{}).(trace.SpanContext)
	return sc, ok && sc.IsValid()
}

// NewIDs implements sdktrace.IDGenerator for root spans.
func (presetIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := preset(ctx); ok {
		return sc.TraceID(), sc.SpanID()
	}
	return newTraceID(), newSpanID()
}

// NewSpanID implements sdktrace.IDGenerator for child spans.
func (presetIDs) NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID {
	if sc, ok := preset(ctx); ok && sc.TraceID() == traceID {
		return sc.SpanID()
	}
	return newSpanID()
}

func newTraceID() trace.TraceID {
	var id trace.TraceID
	for !id.IsValid() {
		binary.BigEndian.PutUint64(id[:8], rand.Uint64())
		binary.BigEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

func newSpanID() trace.SpanID {
	var id trace.SpanID
	for !id.IsValid() {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}
