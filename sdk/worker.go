package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

// HandlerFunc runs one attempt of a task. The value it returns must be
// JSON-marshalable and becomes the step's output; an error fails the
// attempt, retried by the step's policy unless it is [Permanent]. ctx ends
// at the task's deadline, when the server no longer wants the task
// (cancelled, or given up as lost), and when the worker releases it at
// shutdown.
type HandlerFunc func(ctx context.Context, t Task) (any, error)

// WorkerOptions configure a [Worker]. Zero fields take their defaults.
type WorkerOptions struct {
	// Queue is the queue this worker serves (default "default").
	Queue string
	// ID names the worker in the server's records (default host:pid).
	ID string
	// Concurrency bounds the tasks run at once (default 10).
	Concurrency int
	// PollWait is how long one poll waits for tasks (default 20 s; the
	// server caps it at 30 s).
	PollWait time.Duration
	// HeartbeatEvery is how often a running task's lease is extended
	// (default a third of the lease the server granted, at most 10 s).
	HeartbeatEvery time.Duration
	// DrainTimeout is how long in-flight tasks may run on after Run's ctx
	// ends; then their contexts are cancelled and unfinished tasks are
	// released to be retried (default 30 s).
	DrainTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts to reach
	// an unavailable server (defaults 100 ms and 10 s).
	MinBackoff, MaxBackoff time.Duration
	// Logger receives the worker's problems (default slog.Default()).
	Logger *slog.Logger
	// TraceContext, when set, places a handler's context in its task's
	// trace for a tracing library; with OpenTelemetry:
	// otel.GetTextMapPropagator().Extract(ctx, propagation.MapCarrier{
	// "traceparent": t.Traceparent, "tracestate": t.Tracestate}). The
	// context carries the trace for TraceFromContext either way.
	TraceContext func(ctx context.Context, t Trace) context.Context
}

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.Queue == "" {
		o.Queue = "default"
	}
	if o.ID == "" {
		host, _ := os.Hostname()
		o.ID = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 10
	}
	if o.PollWait <= 0 {
		o.PollWait = 20 * time.Second
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 30 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(10*time.Second, o.MinBackoff)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Worker long-polls the server for tasks of its queue and registered
// handlers and runs them. Register handlers with Handle, then call Run.
type Worker struct {
	c        *Client
	opts     WorkerOptions
	mu       sync.RWMutex
	handlers map[string]HandlerFunc
}

// NewWorker returns a worker polling through c.
func (c *Client) NewWorker(opts WorkerOptions) *Worker {
	return &Worker{c: c, opts: opts.withDefaults(), handlers: map[string]HandlerFunc{}}
}

// Handle registers h under a handler name, replacing any earlier one.
// Handlers registered after Run started are polled for from the next poll.
func (w *Worker) Handle(name string, h HandlerFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers[name] = h
}

func (w *Worker) handler(name string) (HandlerFunc, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	h, ok := w.handlers[name]
	return h, ok
}

func (w *Worker) names() []string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	names := make([]string, 0, len(w.handlers))
	for n := range w.handlers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ErrNoHandlers is returned by Run when no handler is registered.
var ErrNoHandlers = errors.New("ductor: worker has no handlers")

// Run polls for tasks and runs them until ctx ends, then stops polling and
// waits for in-flight tasks: up to DrainTimeout, after which their
// contexts are cancelled and unfinished ones released to be retried. It
// returns nil after a shutdown, or the error that makes polling pointless
// (a refused key, a malformed request). An unreachable or failing server
// is retried with backoff.
func (w *Worker) Run(ctx context.Context) error {
	if len(w.names()) == 0 {
		return ErrNoHandlers
	}
	tasks, release := context.WithCancel(context.WithoutCancel(ctx))
	defer release()
	slots := make(chan struct{}, w.opts.Concurrency)
	var running sync.WaitGroup
	err := w.pollLoop(ctx, tasks, slots, &running)
	w.drain(tasks, release, &running)
	return err
}

// drain waits for in-flight tasks, cancelling them after DrainTimeout.
func (w *Worker) drain(tasks context.Context, release context.CancelFunc, running *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { running.Wait(); close(done) }()
	t := time.NewTimer(w.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		release()
		<-done
	}
}

// pollLoop claims as many tasks as there are free slots and starts each
// on its own goroutine, until ctx ends.
func (w *Worker) pollLoop(ctx, tasks context.Context, slots chan struct{}, running *sync.WaitGroup) error {
	b := backoff{min: w.opts.MinBackoff, max: w.opts.MaxBackoff}
	for {
		free, ok := w.waitForSlot(ctx, slots)
		if !ok {
			return nil
		}
		claimed, err := w.poll(ctx, free)
		if ctx.Err() != nil {
			w.start(tasks, claimed, slots, running) // claimed just before shutdown
			return nil
		}
		if err != nil {
			if !retryable(err) {
				return err
			}
			w.opts.Logger.WarnContext(ctx, "ductor worker: poll failed, retrying", "err", err)
			if !sleepCtx(ctx, max(b.delay(), retryAfterOf(err))) {
				return nil
			}
			continue
		}
		b.reset()
		w.start(tasks, claimed, slots, running)
	}
}

// waitForSlot blocks until a slot is free and returns how many are.
func (w *Worker) waitForSlot(ctx context.Context, slots chan struct{}) (int, bool) {
	select {
	case <-ctx.Done():
		return 0, false
	case slots <- struct{}{}:
	}
	free := cap(slots) - len(slots) + 1
	<-slots // taken again per task in start
	return free, true
}

func (w *Worker) start(ctx context.Context, claimed []Task, slots chan struct{}, running *sync.WaitGroup) {
	for _, t := range claimed {
		slots <- struct{}{}
		running.Add(1)
		go func() {
			defer running.Done()
			defer func() { <-slots }()
			w.execute(ctx, t)
		}()
	}
}

type pollRequest struct {
	Queue    string   `json:"queue"`
	Handlers []string `json:"handlers"`
	WorkerID string   `json:"worker_id"`
	Max      int      `json:"max"`
	WaitMS   int64    `json:"wait_ms"`
}

func (w *Worker) poll(ctx context.Context, max int) ([]Task, error) {
	var out struct {
		Tasks []Task `json:"tasks"`
	}
	req := pollRequest{
		Queue: w.opts.Queue, Handlers: w.names(), WorkerID: w.opts.ID, Max: max, WaitMS: w.opts.PollWait.Milliseconds(),
	}
	_, err := w.c.do(ctx, http.MethodPost, "/tasks/poll", req, &out)
	received := time.Now()
	for i := range out.Tasks {
		out.Tasks[i].received = received
	}
	return out.Tasks, err
}
