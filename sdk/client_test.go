package sdk_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ductor/ductor/sdk"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	c, err := sdk.New("", "dk_x")
	if err != nil || c == nil {
		t.Fatalf("New with the default URL: %v", err)
	}
	for _, bad := range [][2]string{{"127.0.0.1:8080", "dk_x"}, {"ftp://h", "dk_x"}, {"http://h", ""}, {"http://h", "secret"}} {
		if _, err := sdk.New(bad[0], bad[1]); err == nil {
			t.Errorf("New(%q, %q) succeeded", bad[0], bad[1])
		}
	}
	if err := (&sdk.Definition{Key: "k"}).Validate(); err == nil {
		t.Error("a definition without steps is valid")
	}
	if _, err := c.Publish(context.Background(), &sdk.Definition{Steps: []sdk.Step{sdk.TransformStep("a", "1")}}); err == nil {
		t.Error("Publish sent a definition without a key")
	}
}

// fakeAPI answers each request with the next of its answers (the last one
// again once they run out) and records the requests.
type fakeAPI struct {
	mu       sync.Mutex
	answers  []fakeAnswer
	requests []*http.Request
}

type fakeAnswer struct {
	status     int
	retryAfter string
	body       string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.answers[min(len(f.requests), len(f.answers)-1)]
	f.requests = append(f.requests, r)
	f.mu.Unlock()
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}

func (f *fakeAPI) seen() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func fakeClient(t *testing.T, opts []sdk.Option, answers ...fakeAnswer) (*fakeAPI, *sdk.Client) {
	t.Helper()
	f := &fakeAPI{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := sdk.New(srv.URL, "dk_test", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

const (
	started     = `{"id": "r1", "status": "running"}`
	rateLimited = `{"error": {"code": "rate_limited", "message": "slow down"}}`
)

// A 429 or 503 with a Retry-After is tried again after that wait; one
// without, a wait longer than the client's bound or than the context's
// deadline, and a retry past the client's count are the caller's, with
// the wait in APIError.RetryAfter.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("retried", func(t *testing.T) {
		t.Parallel()
		f, c := fakeClient(t, nil, fakeAnswer{429, "0", rateLimited}, fakeAnswer{503, "0", `{}`}, fakeAnswer{201, "", started})
		if s, err := c.StartRun(ctx, sdk.StartRun{Definition: "d"}); err != nil || s.ID != "r1" || len(f.seen()) != 3 {
			t.Errorf("StartRun = %+v, %v after %d requests; want r1 after 3", s, err, len(f.seen()))
		}
	})
	t.Run("waits", func(t *testing.T) {
		t.Parallel()
		_, c := fakeClient(t, nil, fakeAnswer{429, "1", rateLimited}, fakeAnswer{201, "", started})
		begin := time.Now()
		if _, err := c.StartRun(ctx, sdk.StartRun{Definition: "d"}); err != nil || time.Since(begin) < time.Second {
			t.Errorf("StartRun = %v after %s; want success after the 1 s Retry-After", err, time.Since(begin))
		}
	})
	for _, tc := range []struct {
		name   string
		opts   []sdk.Option
		answer fakeAnswer
		ctx    func() (context.Context, context.CancelFunc)
		tries  int
		wait   time.Duration
	}{
		{"without Retry-After", nil, fakeAnswer{429, "", rateLimited}, nil, 1, 0},
		{"past the bound", []sdk.Option{sdk.WithRetryAfter(3, time.Minute)}, fakeAnswer{429, "120", rateLimited}, nil, 1, 2 * time.Minute},
		{"past the deadline", nil, fakeAnswer{503, "20", `{}`}, func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 10*time.Second) }, 1, 20 * time.Second},
		{"past the count", []sdk.Option{sdk.WithRetryAfter(2, time.Minute)}, fakeAnswer{429, "0", rateLimited}, nil, 3, 0},
		{"turned off", []sdk.Option{sdk.WithRetryAfter(0, 0)}, fakeAnswer{429, "5", rateLimited}, nil, 1, 5 * time.Second},
		{"another status", nil, fakeAnswer{500, "0", `{}`}, nil, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, c := fakeClient(t, tc.opts, tc.answer)
			callCtx, cancel := context.WithCancel(ctx)
			if tc.ctx != nil {
				callCtx, cancel = tc.ctx()
			}
			defer cancel()
			_, err := c.StartRun(callCtx, sdk.StartRun{Definition: "d"})
			var e *sdk.APIError
			if !errors.As(err, &e) || e.Status != tc.answer.status || e.RetryAfter != tc.wait || len(f.seen()) != tc.tries {
				t.Errorf("StartRun = %v (%+v) after %d requests; want a %d with RetryAfter %s after %d", err, e, len(f.seen()), tc.answer.status, tc.wait, tc.tries)
			}
		})
	}
}

// Retry-After is seconds or an HTTP date.
func TestRetryAfterAsADate(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	_, c := fakeClient(t, []sdk.Option{sdk.WithRetryAfter(0, 0)}, fakeAnswer{503, at, `{}`})
	_, err := c.StartRun(context.Background(), sdk.StartRun{Definition: "d"})
	var e *sdk.APIError
	if !errors.As(err, &e) || e.RetryAfter < 80*time.Second || e.RetryAfter > 90*time.Second {
		t.Errorf("StartRun = %v (%+v), want a RetryAfter of about 90 s", err, e)
	}
}

// Every request names the SDK in its User-Agent, after the program's own
// product when WithUserAgent gives one.
func TestUserAgent(t *testing.T) {
	t.Parallel()
	f, c := fakeClient(t, nil, fakeAnswer{200, "", `{"tenant_id": "t"}`})
	if _, err := c.Whoami(context.Background()); err != nil {
		t.Fatal(err)
	}
	ua := f.seen()[0].UserAgent()
	if !strings.HasPrefix(ua, "ductor-sdk-go/") || !strings.Contains(ua, runtime.Version()) {
		t.Errorf("User-Agent = %q, want ductor-sdk-go/VERSION (%s; …)", ua, runtime.Version())
	}
	g, prefixed := fakeClient(t, []sdk.Option{sdk.WithUserAgent("billing/2.3")}, fakeAnswer{200, "", `{"tenant_id": "t"}`})
	if _, err := prefixed.Whoami(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := g.seen()[0].UserAgent(); got != "billing/2.3 "+ua {
		t.Errorf("User-Agent = %q, want billing/2.3 before %q", got, ua)
	}
}

// StartRun sends the trace of its context as traceparent and tracestate:
// ContextWithTrace's, or what a trace injector sets; a malformed
// traceparent is not sent, and other calls send none.
func TestStartRunSendsTheTrace(t *testing.T) {
	t.Parallel()
	tr := sdk.Trace{Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Tracestate: "vendor=1"}
	injected := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	inject := sdk.WithTraceInjector(func(ctx context.Context, h http.Header) { h.Set("traceparent", injected) })
	for _, tc := range []struct {
		name       string
		opts       []sdk.Option
		ctx        context.Context
		want, only string
	}{
		{"from the context", nil, sdk.ContextWithTrace(context.Background(), tr), tr.Traceparent, tr.Tracestate},
		{"by the injector", []sdk.Option{inject}, sdk.ContextWithTrace(context.Background(), tr), injected, ""},
		{"when the injector finds none", []sdk.Option{sdk.WithTraceInjector(func(context.Context, http.Header) {})}, sdk.ContextWithTrace(context.Background(), tr), tr.Traceparent, tr.Tracestate},
		{"malformed", nil, sdk.ContextWithTrace(context.Background(), sdk.Trace{Traceparent: "00-xyz"}), "", ""},
		{"none", nil, context.Background(), "", ""},
	} {
		f, c := fakeClient(t, tc.opts, fakeAnswer{201, "", started})
		if _, err := c.StartRun(tc.ctx, sdk.StartRun{Definition: "d"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetRun(tc.ctx, "r1"); err != nil {
			t.Fatal(err)
		}
		reqs := f.seen()
		if got := reqs[0].Header.Get("traceparent"); got != tc.want || reqs[0].Header.Get("tracestate") != tc.only {
			t.Errorf("%s: traceparent %q, tracestate %q; want %q, %q", tc.name, got, reqs[0].Header.Get("tracestate"), tc.want, tc.only)
		}
		if reqs[1].Header.Get("traceparent") != "" {
			t.Errorf("%s: GetRun sent a traceparent", tc.name)
		}
	}
	if tr.TraceID() != "0af7651916cd43dd8448eb211c80319c" || (sdk.Trace{Traceparent: "00-" + strings.Repeat("0", 32) + "-b7ad6b7169203331-01"}).Valid() {
		t.Error("Trace reads trace ids wrong")
	}
}
