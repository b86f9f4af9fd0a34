package shell

import (
	"context"
	"time"
)

// A step's start and its result are written by a worker that holds the
// attempt; while the database is away (a restart takes a few seconds),
// the worker keeps them and tries again with backoff rather than drop
// them, for as long as the attempt is still its own: until the job could
// be reported stranded (a start), or until the attempt's lease runs out (a
// result). Past that the sweep reports the attempt lost and retries the
// step, so giving up then executes nothing twice that a success would not
// have. Deadlines are kept on the process's monotonic clock, measured
// from a moment before the database computed the same bound: the worker
// stops offering before the database stops accepting, never after.

// retryBackoff is the wait before the n-th retry (n ≥ 1): 25 ms doubling
// to at most a second.
func retryBackoff(n int) time.Duration {
	d := 25 * time.Millisecond
	for i := 1; i < n && d < time.Second; i++ {
		d *= 2
	}
	return min(d, time.Second)
}

// waitRetry waits out the n-th backoff, unless ctx ends or the wait would
// end past until; it reports whether to try again.
func waitRetry(ctx context.Context, n int, until time.Time) bool {
	d := retryBackoff(n)
	if !time.Now().Add(d).Before(until) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
