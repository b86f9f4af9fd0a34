package e2e

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ductor/ductor/sdk"
)

// otelWorker is how docs/sdk.md has a worker hand OpenTelemetry its task's
// trace.
func otelWorker(ctx context.Context, t sdk.Trace) context.Context {
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": t.Traceparent, "tracestate": t.Tracestate})
}

// otelInjector is how docs/sdk.md has StartRun send OpenTelemetry's span.
func otelInjector(ctx context.Context, h http.Header) {
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

// A bridge task carries its attempt's place in the run's trace, and the
// handler's context holds it: TraceFromContext reads it, and with the
// worker's TraceContext hook an OpenTelemetry span started from that
// context joins the run's trace.
func TestSDKHandlerContextCarriesTheRunsTrace(t *testing.T) {
	t.Parallel()
	url, key := startSDKServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdkClient(t, url, key)
	if _, err := c.Publish(ctx, &sdk.Definition{Key: "traced", Steps: []sdk.Step{sdk.TaskStep("work", sdk.TaskWith{Handler: "ext.work"})}}); err != nil {
		t.Fatal(err)
	}
	w := c.NewWorker(sdk.WorkerOptions{Queue: "default", Logger: slog.New(slog.DiscardHandler), TraceContext: otelWorker})
	seen := make(chan [3]string, 1)
	w.Handle("ext.work", func(ctx context.Context, task sdk.Task) (any, error) {
		own, _ := sdk.TraceFromContext(ctx)
		seen <- [3]string{trace.SpanContextFromContext(ctx).TraceID().String(), own.TraceID(), task.Traceparent}
		return nil, nil
	})
	workerCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = w.Run(workerCtx) }()
	started, err := c.StartRun(ctx, sdk.StartRun{Definition: "traced"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.WaitRun(ctx, started.ID, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	got := <-seen
	if run.TraceID == "" || got[0] != run.TraceID || got[1] != run.TraceID || len(got[2]) != 55 || got[2][3:35] != run.TraceID {
		t.Errorf("handler saw trace %s (OpenTelemetry), %s (sdk) and traceparent %q; the run's trace is %q", got[0], got[1], got[2], run.TraceID)
	}
}

// StartRun starts the run in the caller's trace: the OpenTelemetry span of
// its context through a trace injector, or the trace of ContextWithTrace.
func TestSDKStartRunPropagatesTheCallersTrace(t *testing.T) {
	t.Parallel()
	url, key := startSDKServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	plain := sdkClient(t, url, key)
	if _, err := plain.Publish(ctx, &sdk.Definition{Key: "traced", Steps: []sdk.Step{sdk.TransformStep("hi", `"hi"`)}}); err != nil {
		t.Fatal(err)
	}
	injecting, err := sdk.New(url, key, sdk.WithTraceInjector(otelInjector))
	if err != nil {
		t.Fatal(err)
	}
	otelID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	span := trace.NewSpanContext(trace.SpanContextConfig{TraceID: otelID, SpanID: spanID, TraceFlags: trace.FlagsSampled, Remote: true})
	own := sdk.Trace{Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	for _, tc := range []struct {
		name string
		c    *sdk.Client
		ctx  context.Context
		want string
	}{
		{"an OpenTelemetry span", injecting, trace.ContextWithSpanContext(ctx, span), otelID.String()},
		{"ContextWithTrace", plain, sdk.ContextWithTrace(ctx, own), own.TraceID()},
	} {
		started, err := tc.c.StartRun(tc.ctx, sdk.StartRun{Definition: "traced"})
		if err != nil {
			t.Fatal(err)
		}
		if run, err := tc.c.GetRun(ctx, started.ID); err != nil || run.TraceID != tc.want {
			t.Errorf("%s: run = %+v, %v; want it in trace %s", tc.name, run, err, tc.want)
		}
	}
}
