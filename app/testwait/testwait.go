// Package testwait waits in tests for something that happens elsewhere (a
// run ending, a row appearing, a process answering) by polling it with a
// deadline, never by sleeping a guessed time.
//
//	testwait.Eventually(t, 10*time.Second, "the run ends", func() bool {
//		return status(t, id) == "completed"
//	})
//
// It is for tests only; production code waits on signals, tickers and
// contexts of its own.
package testwait

import (
	"context"
	"time"
)

// TB is the part of testing.TB that Eventually uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// interval is how often a condition is polled: short against the
// deadlines tests use, long enough not to load a busy machine.
const interval = 10 * time.Millisecond

// Eventually polls cond until it holds and fails the test, naming what,
// when it has not held within timeout. It returns as soon as cond holds.
func Eventually(t TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(context.Background(), timeout, cond) {
		t.Fatalf("not within %s: %s", timeout, what)
	}
}

// Value polls get until it reports ok and returns its value, failing the
// test as Eventually does.
func Value[T any](t TB, timeout time.Duration, what string, get func() (T, bool)) T {
	t.Helper()
	var v T
	Eventually(t, timeout, what, func() bool {
		var ok bool
		v, ok = get()
		return ok
	})
	return v
}

// Until polls cond until it holds (true), timeout passes or ctx ends
// (false). It is the loop behind Eventually, for callers that report
// failure their own way.
func Until(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
}
