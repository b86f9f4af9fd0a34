package sdk

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// By default a call answered 429 or 503 with a Retry-After waits and is
// tried again up to defaultRetries times, when the wait is at most
// defaultMaxWait and ends before the call's context does.
const (
	defaultRetries = 3
	defaultMaxWait = 30 * time.Second
)

// WithRetryAfter sets how a call answers a 429 (too many requests) or a
// 503 (unavailable) that carries a Retry-After header: it waits that long
// and tries again, at most retries times, when the wait is at most
// maxWait and ends before the call's context does; otherwise the call
// returns the [APIError], whose RetryAfter says the wait. The default is
// 3 retries of at most 30 s; WithRetryAfter(0, 0) turns retrying off.
// The server answers 429 and 503 having done nothing, so the call is not
// made twice (but for a database failing as it commits: a StartRun with
// an IdempotencyKey answers the run already started).
func WithRetryAfter(retries int, maxWait time.Duration) Option {
	return func(c *Client) { c.retries, c.maxWait = retries, maxWait }
}

// retryAfter is how long to wait before trying a call again that failed
// with err on its retry-th retry, and whether to.
func (c *conn) retryAfter(ctx context.Context, err error, retry int) (time.Duration, bool) {
	var e *APIError
	if !errors.As(err, &e) || !e.retryAfterSent || retry >= c.retries || e.RetryAfter > c.maxWait {
		return 0, false
	}
	if e.Status != http.StatusTooManyRequests && e.Status != http.StatusServiceUnavailable {
		return 0, false
	}
	if end, ok := ctx.Deadline(); ok && time.Now().Add(e.RetryAfter).After(end) {
		return 0, false
	}
	return e.RetryAfter, true
}

// parseRetryAfter reads a Retry-After header, seconds or an HTTP date,
// as a wait from now, and whether it is one.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(secs)*time.Second, 0), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// retryAfterOf is the Retry-After of err, an [APIError], or 0.
func retryAfterOf(err error) time.Duration {
	var e *APIError
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}
