package sdk_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/ductor/ductor/sdk"
)

// A bridge task carries its attempt's place in the run's trace, and the
// handler's context holds it: an OpenTelemetry span started from that
// context joins the run's trace.
func TestHandlerContextCarriesTheRunsTrace(t *testing.T) {
	t.Parallel()
	url, key := startDuctor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newClient(t, url, key)
	if _, err := c.Publish(ctx, &sdk.Definition{Key: "traced", Steps: []sdk.Step{sdk.TaskStep("work", sdk.TaskWith{Handler: "ext.work"})}}); err != nil {
		t.Fatal(err)
	}
	w := c.NewWorker(sdk.WorkerOptions{Queue: "default", Logger: slog.New(slog.DiscardHandler)})
	seen := make(chan [2]string, 1)
	w.Handle("ext.work", func(ctx context.Context, task sdk.Task) (any, error) {
		sc := trace.SpanContextFromContext(ctx)
		seen <- [2]string{sc.TraceID().String(), task.Traceparent}
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
	if run.TraceID == "" || got[0] != run.TraceID || len(got[1]) != 55 || got[1][3:35] != run.TraceID {
		t.Errorf("handler saw trace %s and traceparent %q; the run's trace is %q", got[0], got[1], run.TraceID)
	}
}
