package checker

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/sdk"
)

// What the clock test waits for: a timer, a signal, a sync child, a
// retry's backoff, and a bridge task (timed out after 10 s if its SDK
// worker misread the deadline).
var clockDefinitions = []string{`
key: clk-timer
steps:
  - {ref: nap, type: wait, with: {duration: 1s}}
`, `
key: clk-signal
steps:
  - {ref: wake, type: signal, with: {name: wake}}
`, `
key: clk-leaf
steps:
  - {ref: work, type: task, timeout: 60s, with: {handler: checker.step, input_expr: '{"ms": 0}'}}
`, `
key: clk-child
steps:
  - {ref: kid, type: subworkflow, with: {workflow: clk-leaf}}
`, `
key: clk-retry
steps:
  - ref: flaky
    type: task
    timeout: 60s
    retry: {max_attempts: 2, initial_interval: 500ms}
    with: {handler: checker.step, input_expr: '{"fail_attempts": 1}'}
`, `
key: clk-bridge
steps:
  - {ref: remote, type: task, timeout: 10s, with: {handler: clock.remote, queue: remote}}
`}

// Every wake-up is decided by the database's clock: with the database's
// clock 30 s ahead of the processes' or 30 s behind it (Postgres under
// libfaketime), a timer, a signal, a sync child's completion, a retry's
// backoff and a bridge task answer as fast as with the clocks agreeing,
// not 30 s later (or early, or at once). Measured from this process by
// polling: each wake-up within 5 s, the timer no earlier than its second.
func TestWakeUpsFollowTheDatabaseClock(t *testing.T) {
	t.Parallel()
	for _, offset := range []time.Duration{0, 30 * time.Second, -30 * time.Second} {
		t.Run(fmt.Sprintf("database %+ds", int(offset.Seconds())), func(t *testing.T) {
			t.Parallel()
			got := wakeUps(t, offset)
			var report []string
			for _, w := range []string{"timer", "signal", "child", "retry", "bridge"} {
				report = append(report, fmt.Sprintf("%s %s", w, got[w].Round(time.Millisecond)))
				if got[w] > 5*time.Second {
					t.Errorf("%s woke after %s with the database clock %s off", w, got[w], offset)
				}
			}
			if got["timer"] < time.Second {
				t.Errorf("a 1 s timer fired after %s", got["timer"])
			}
			t.Logf("database clock %+ds: %s", int(offset.Seconds()), strings.Join(report, ", "))
		})
	}
}

// wakeUps measures each wake-up on a cluster whose clock is offset from
// this machine's, with a worker process (on the machine's clock) ticking.
func wakeUps(t *testing.T, offset time.Duration) map[string]time.Duration {
	t.Helper()
	c := startCluster(t, pgcluster.Options{Fast: true, ClockOffset: offset})
	for _, doc := range clockDefinitions {
		testdb.Definition(t, c.store, c.tenant, doc)
	}
	StartWorker(t, c.cluster.URL(), WorkerOptions{RescueWindow: 2 * time.Second})
	bridgeWorker(t, c)
	var mu sync.Mutex
	got := map[string]time.Duration{}
	measure := func(name string, f func() (time.Duration, uuid.UUID)) func() {
		return func() {
			took, id := f()
			if run := c.waitRun(t, id, 60*time.Second, ended); run.Status != engine.RunSucceeded {
				t.Errorf("%s run %s ended %s: %v", name, id, run.Status, run.State.Error)
			}
			mu.Lock()
			got[name] = took
			mu.Unlock()
		}
	}
	fromStart := func(key string) func() (time.Duration, uuid.UUID) {
		return func() (time.Duration, uuid.UUID) {
			began := time.Now()
			id := c.start(t, key, nil)
			c.waitRun(t, id, 60*time.Second, ended)
			return time.Since(began), id
		}
	}
	var wg sync.WaitGroup
	for name, key := range map[string]string{"timer": "clk-timer", "child": "clk-child", "retry": "clk-retry", "bridge": "clk-bridge"} {
		wg.Go(measure(name, fromStart(key)))
	}
	wg.Go(measure("signal", func() (time.Duration, uuid.UUID) { return signalWake(t, c) }))
	wg.Wait()
	return got
}

// signalWake is the time from a signal to the end of the run it woke.
func signalWake(t *testing.T, c *ownCluster) (time.Duration, uuid.UUID) {
	id := c.start(t, "clk-signal", nil)
	c.waitRun(t, id, 30*time.Second, c.waiting(id, "wake"))
	sent := time.Now()
	if _, err := c.coord.Runs.Signal(c.ctx, c.tenant, id, engine.Signal{RequestID: "w", Name: "wake"}); err != nil {
		t.Fatal(err)
	}
	c.waitRun(t, id, 60*time.Second, ended)
	return time.Since(sent), id
}

// bridgeWorker serves clock.remote over the API with the SDK, as a
// process on the machine's clock would, until the test ends.
func bridgeWorker(t *testing.T, c *ownCluster) {
	t.Helper()
	client, err := sdk.New(c.api.URL, c.key)
	if err != nil {
		t.Fatal(err)
	}
	w := client.NewWorker(sdk.WorkerOptions{Queue: "remote", PollWait: time.Second, Logger: slog.New(slog.DiscardHandler)})
	w.Handle("clock.remote", func(ctx context.Context, _ sdk.Task) (any, error) {
		select {
		case <-ctx.Done(): // the deadline, as the worker reckons it
			return nil, context.Cause(ctx)
		case <-time.After(100 * time.Millisecond): // the work itself
			return map[string]any{"ok": true}, nil
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}
