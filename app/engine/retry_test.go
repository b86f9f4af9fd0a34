package engine

import (
	"testing"
	"time"

	"github.com/ductor/ductor/app/definition"
)

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	p := definition.RetryPolicy{MaxAttempts: 10, InitialIntervalMS: 1000, BackoffCoefficient: 2, MaxIntervalMS: 60000, Jitter: true}
	for _, tc := range []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 500 * time.Millisecond, time.Second},
		{2, time.Second, 2 * time.Second},
		{3, 2 * time.Second, 4 * time.Second},
		{7, 30 * time.Second, 60 * time.Second}, // 64s capped at 60s
		{20, 30 * time.Second, 60 * time.Second},
	} {
		for _, r := range []float64{0, 0.25, 0.5, 0.999999} {
			got := Backoff(p, tc.attempt, r)
			if got < tc.min || got > tc.max {
				t.Errorf("attempt %d r=%v: %v not in [%v, %v]", tc.attempt, r, got, tc.min, tc.max)
			}
		}
	}
	p.Jitter = false
	if got := Backoff(p, 3, 0.1); got != 4*time.Second {
		t.Errorf("no jitter: %v, want 4s", got)
	}
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	p := definition.RetryPolicy{MaxAttempts: 3}
	for _, tc := range []struct {
		attempt int
		err     *Error
		want    bool
	}{
		{1, &Error{Code: "x", Retryable: true}, true},
		{2, &Error{Code: "x", Retryable: true}, true},
		{3, &Error{Code: "x", Retryable: true}, false},
		{1, &Error{Code: "x"}, false},
		{1, &Error{Code: CodeExpressionError, Retryable: true}, false},
		{1, &Error{Code: CodePayloadTooLarge, Retryable: true}, false},
	} {
		if got := retryable(p, tc.attempt, tc.err); got != tc.want {
			t.Errorf("attempt %d %+v: %v, want %v", tc.attempt, tc.err, got, tc.want)
		}
	}
}

// Retries are scheduled with a backoff inside the policy's bounds, drawn
// from the tick's seed: the same seed decides the same delay.
func TestRetryScheduledFromSeed(t *testing.T) {
	t.Parallel()
	m, _ := parseManifest("step a task retry=4")
	runAt := func(seed uint64) time.Time {
		s := newSim(t, m, nil)
		s.tick(t0, seed)
		ds := s.tick(t0, seed, failed("a", 1, "x", true))
		for _, c := range ds[0].Commands {
			if x, ok := c.(DispatchAttempt); ok && x.Attempt == 2 {
				return x.RunAt
			}
		}
		t.Fatal("no retry dispatched")
		return time.Time{}
	}
	a, b := runAt(42), runAt(42)
	if !a.Equal(b) {
		t.Fatalf("same seed, different delays: %v %v", a, b)
	}
	if d := a.Sub(t0); d < 500*time.Millisecond || d > time.Second {
		t.Fatalf("delay %v outside [0.5s, 1s]", d)
	}
}
