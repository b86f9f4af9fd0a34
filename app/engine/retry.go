package engine

import (
	"math"
	"time"

	"github.com/ductor/ductor/app/definition"
)

// Backoff is the delay before the attempt after failed attempt number
// `attempt` (1-based): initial × coefficient^(attempt-1), capped at the
// maximum interval. With jitter the delay is drawn uniformly from
// [d/2, d] using r in [0, 1), so bounds are known and nothing reads a
// global random source.
func Backoff(p definition.RetryPolicy, attempt int, r float64) time.Duration {
	initial := float64(p.InitialIntervalMS) * float64(time.Millisecond)
	coef := p.BackoffCoefficient
	if coef < 1 {
		coef = 1
	}
	d := initial * math.Pow(coef, float64(max(attempt-1, 0)))
	if p.MaxIntervalMS > 0 {
		d = math.Min(d, float64(p.MaxIntervalMS)*float64(time.Millisecond))
	}
	if p.Jitter {
		d = d/2 + r*d/2
	}
	return time.Duration(d)
}

// retryable reports whether a failed attempt may be retried under p.
func retryable(p definition.RetryPolicy, attempt int, err *Error) bool {
	if err == nil || !err.Retryable || nonRetryable[err.Code] {
		return false
	}
	return attempt < max(p.MaxAttempts, 1)
}
