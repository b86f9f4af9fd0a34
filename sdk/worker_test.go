package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTasks is a server speaking the task endpoints: it answers 503 to
// the first unavailable polls, then hands out its tasks, and records
// every result.
type fakeTasks struct {
	mu          sync.Mutex
	tasks       []Task
	unavailable int
	polls       atomic.Int32
	maxAsked    atomic.Int32
	heartbeat   int // status answered to heartbeats (default 200)
	retryAfter  string
	results     chan fakeResult
}

type fakeResult struct {
	id, verb string
	body     map[string]any
}

func newFakeTasks(t *testing.T, n int) (*fakeTasks, *Client) {
	t.Helper()
	f := &fakeTasks{results: make(chan fakeResult, 100), heartbeat: http.StatusOK}
	for i := range n {
		f.tasks = append(f.tasks, Task{ID: fmt.Sprintf("t%d", i), Token: "tok", Handler: "h", Attempt: 1, Input: json.RawMessage(`{"n": 1}`)})
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, "dk_test")
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func (f *fakeTasks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	path := strings.TrimPrefix(r.URL.Path, "/api/v1/tasks/")
	if path == "poll" {
		f.poll(w, r, body)
		return
	}
	id, verb, _ := strings.Cut(path, "/")
	if verb == "heartbeat" {
		w.WriteHeader(f.heartbeat)
		_, _ = w.Write([]byte(`{"error": {"code": "conflict", "message": "lost"}}`))
		return
	}
	f.results <- fakeResult{id: id, verb: verb, body: body}
	_, _ = w.Write([]byte(`{}`))
}

func (f *fakeTasks) poll(w http.ResponseWriter, r *http.Request, body map[string]any) {
	if f.polls.Add(1) <= int32(f.unavailable) {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	asked := int(body["max"].(float64))
	f.maxAsked.Store(max(f.maxAsked.Load(), int32(asked)))
	f.mu.Lock()
	n := min(asked, len(f.tasks))
	claimed := f.tasks[:n]
	f.tasks = f.tasks[n:]
	f.mu.Unlock()
	if n == 0 {
		<-r.Context().Done() // a long poll with nothing to hand out
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"tasks": claimed})
}

// result waits for the next result the worker delivered.
func (f *fakeTasks) result(t *testing.T) fakeResult {
	t.Helper()
	select {
	case r := <-f.results:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no result delivered")
		return fakeResult{}
	}
}

func quietOptions(o WorkerOptions) WorkerOptions {
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.MinBackoff, o.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return o
}

// runWorker runs w until the returned stop is called, and returns Run's
// error channel.
func runWorker(w *Worker) (context.CancelFunc, <-chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return cancel, done
}

func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

func TestWorkerShutdownWaitsForInFlightTasks(t *testing.T) {
	t.Parallel()
	f, c := newFakeTasks(t, 1)
	started, release := make(chan struct{}), make(chan struct{})
	w := c.NewWorker(quietOptions(WorkerOptions{}))
	w.Handle("h", func(ctx context.Context, task Task) (any, error) {
		close(started)
		<-release
		return map[string]int{"done": 1}, nil
	})
	stop, done := runWorker(w)
	<-started
	stop()
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) while a task was running", err)
	default:
	}
	close(release)
	if err := waitErr(t, done); err != nil {
		t.Errorf("Run = %v, want nil after a shutdown", err)
	}
	if r := f.result(t); r.verb != "complete" || fmt.Sprint(r.body["output"]) != "map[done:1]" {
		t.Errorf("result = %+v, want the in-flight task completed", r)
	}
}

func TestWorkerReleasesTasksAfterDrainTimeout(t *testing.T) {
	t.Parallel()
	f, c := newFakeTasks(t, 1)
	started := make(chan struct{})
	w := c.NewWorker(quietOptions(WorkerOptions{DrainTimeout: 20 * time.Millisecond}))
	w.Handle("h", func(ctx context.Context, task Task) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	stop, done := runWorker(w)
	<-started
	stop()
	if err := waitErr(t, done); err != nil {
		t.Errorf("Run = %v", err)
	}
	r := f.result(t)
	e, _ := r.body["error"].(map[string]any)
	if r.verb != "fail" || e["retryable"] != true || e["code"] != "worker_stopped" {
		t.Errorf("result = %+v, want the task released as a retryable cancellation", r)
	}
}

func TestWorkerRetriesAnUnavailableServer(t *testing.T) {
	t.Parallel()
	f, c := newFakeTasks(t, 1)
	f.unavailable = 3
	w := c.NewWorker(quietOptions(WorkerOptions{}))
	w.Handle("h", func(ctx context.Context, task Task) (any, error) { return "ok", nil })
	stop, done := runWorker(w)
	defer func() { stop(); waitErr(t, done) }()
	if r := f.result(t); r.verb != "complete" || f.polls.Load() < 4 {
		t.Errorf("result = %+v after %d polls, want completed after the server came back", r, f.polls.Load())
	}
}

// A poll answered 503 with a Retry-After waits that long before the
// next, however short the worker's own backoff.
func TestWorkerHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	f, c := newFakeTasks(t, 1)
	f.unavailable, f.retryAfter = 1, "1"
	WithRetryAfter(0, 0)(c) // the worker's own backoff, not the client's retry
	w := c.NewWorker(quietOptions(WorkerOptions{}))
	w.Handle("h", func(ctx context.Context, task Task) (any, error) { return "ok", nil })
	begin := time.Now()
	stop, done := runWorker(w)
	defer func() { stop(); waitErr(t, done) }()
	if r := f.result(t); r.verb != "complete" || time.Since(begin) < time.Second {
		t.Errorf("result = %+v after %s, want it after the 1 s Retry-After", r, time.Since(begin))
	}
}

func TestWorkerPermanentErrorIsNotRetryable(t *testing.T) {
	t.Parallel()
	f, c := newFakeTasks(t, 2)
	w := c.NewWorker(quietOptions(WorkerOptions{Concurrency: 1}))
	w.Handle("h", func(ctx context.Context, task Task) (any, error) {
		if task.ID == "t0" {
			return nil, Permanent(errors.New("card declined"))
		}
		return nil, errors.New("flaky")
	})
	stop, done := runWorker(w)
	defer func() { stop(); waitErr(t, done) }()
	got := map[string]map[string]any{}
	for range 2 {
		r := f.result(t)
		got[r.id], _ = r.body["error"].(map[string]any)
	}
	if got["t0"]["retryable"] != false || got["t0"]["message"] != "card declined" || got["t1"]["retryable"] != true {
		t.Errorf("failures = %v, want t0 permanent and t1 retryable", got)
	}
}

func TestWorkerStopsATaskTheServerNoLongerWants(t *testing.T) {
	t.Parallel()
	f, c := newFakeTasks(t, 1)
	f.heartbeat = http.StatusConflict
	cause := make(chan error, 1)
	w := c.NewWorker(quietOptions(WorkerOptions{HeartbeatEvery: 5 * time.Millisecond}))
	w.Handle("h", func(ctx context.Context, task Task) (any, error) {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	stop, done := runWorker(w)
	defer func() { stop(); waitErr(t, done) }()
	select {
	case err := <-cause:
		if !errors.Is(err, ErrTaskLost) {
			t.Errorf("cause = %v, want ErrTaskLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler was not stopped after a 409 heartbeat")
	}
}

func TestWorkerBoundsConcurrency(t *testing.T) {
	t.Parallel()
	f, c := newFakeTasks(t, 6)
	var running, peak atomic.Int32
	w := c.NewWorker(quietOptions(WorkerOptions{Concurrency: 2}))
	w.Handle("h", func(ctx context.Context, task Task) (any, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		return nil, nil
	})
	stop, done := runWorker(w)
	defer func() { stop(); waitErr(t, done) }()
	for range 6 {
		f.result(t)
	}
	if peak.Load() > 2 || f.maxAsked.Load() > 2 {
		t.Errorf("peak %d handlers, polls asked for up to %d; want at most 2", peak.Load(), f.maxAsked.Load())
	}
}

func TestWorkerWithoutHandlers(t *testing.T) {
	t.Parallel()
	_, c := newFakeTasks(t, 0)
	if err := c.NewWorker(WorkerOptions{}).Run(context.Background()); !errors.Is(err, ErrNoHandlers) {
		t.Errorf("Run = %v, want ErrNoHandlers", err)
	}
}
