package steps_test

import (
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/ductor/ductor/app/steps"
)

// An http step sends the W3C trace context of its attempt, unless the
// step set its own.
func TestHTTPSendsTraceContext(t *testing.T) {
	t.Parallel()
	got := make(chan [2]string, 2)
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		got <- [2]string{r.Header.Get("Traceparent"), r.Header.Get("Tracestate")}
	})
	state, _ := trace.ParseTraceState("ductor=1")
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, TraceState: state, Remote: true,
	})
	ctx := trace.ContextWithRemoteSpanContext(t.Context(), sc)
	b := setup(t, loopbackAllowed)
	if _, err := b.exec.Execute(ctx, withTimeout(httpReq(map[string]any{"url": srv.URL}))); err != nil {
		t.Fatal(err)
	}
	want := [2]string{"00-01020300000000000000000000000000-0405060000000000-01", "ductor=1"}
	if h := <-got; h != want {
		t.Errorf("server saw trace headers %q, want %q", h, want)
	}
	own := httpReq(map[string]any{"url": srv.URL, "headers": map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}})
	if _, err := b.exec.Execute(ctx, withTimeout(own)); err != nil {
		t.Fatal(err)
	}
	if h := <-got; h[0] != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Errorf("the step's own traceparent was replaced by %q", h[0])
	}
}

func withTimeout(r steps.Request) steps.Request {
	r.Timeout = 10 * time.Second
	return r
}
