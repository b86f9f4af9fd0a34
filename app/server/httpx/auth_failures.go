package httpx

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/ductor/ductor/app/apperr"
)

// Failed authentications per budget (a client address and what it
// failed at): DefaultAuthFailureBurst that refills at
// DefaultAuthFailuresPerMinute.
const (
	DefaultAuthFailuresPerMinute = 20
	DefaultAuthFailureBurst      = 20
	// maxFailureAddrs bounds the budgets remembered; past it those that
	// are full are forgotten, and if that is not enough, all are.
	maxFailureAddrs = 100_000
)

// FailureLimiter counts failed authentications per budget. A budget's
// key is a client address (see TrustedProxies.ClientAddr) and what the
// client failed at, as far as it is known without a lookup: a key with a
// valid tag, a webhook. The callers check a budget only for requests
// that would fail anyway or that cannot be told from those without the
// lookup the budget spares, so a client that authenticates is never
// refused for another's failures. Each process counts its own.
type FailureLimiter struct {
	per   rate.Limit
	burst int

	mu    sync.Mutex
	addrs map[string]*rate.Limiter
}

// NewFailureLimiter allows perMinute failures a minute in bursts of
// burst per client and kind of failure (0: the defaults).
func NewFailureLimiter(perMinute float64, burst int) *FailureLimiter {
	if perMinute <= 0 {
		perMinute = DefaultAuthFailuresPerMinute
	}
	if burst <= 0 {
		burst = DefaultAuthFailureBurst
	}
	return &FailureLimiter{per: rate.Limit(perMinute / 60), burst: burst, addrs: map[string]*rate.Limiter{}}
}

// Check refuses a budget that is spent, with Retry-After.
func (f *FailureLimiter) Check(c echo.Context, key string) error {
	tokens := f.tokens(key)
	if tokens >= 1 {
		return nil
	}
	secs := max(int(math.Ceil((1-tokens)/float64(f.per))), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return apperr.New(apperr.RateLimited, "too many failed authentications from this address; retry in %d s", secs)
}

// Spent reports whether a budget is spent.
func (f *FailureLimiter) Spent(key string) bool { return f.tokens(key) < 1 }

func (f *FailureLimiter) tokens(key string) float64 {
	f.mu.Lock()
	l := f.addrs[key]
	f.mu.Unlock()
	if l == nil {
		return float64(f.burst)
	}
	return l.TokensAt(time.Now())
}

// Fail spends one of the budget.
func (f *FailureLimiter) Fail(key string) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.addrs[key]
	if l == nil {
		f.prune(now)
		l = rate.NewLimiter(f.per, f.burst)
		f.addrs[key] = l
	}
	l.AllowN(now, 1)
}

// refuse answers a request that failed: 429 once its budget is spent,
// else err, spending one of the budget.
func (f *FailureLimiter) refuse(c echo.Context, key string, err error) error {
	if spent := f.Check(c, key); spent != nil {
		return spent
	}
	f.Fail(key)
	return err
}

func (f *FailureLimiter) prune(now time.Time) {
	if len(f.addrs) < maxFailureAddrs {
		return
	}
	for a, l := range f.addrs {
		if l.TokensAt(now) >= float64(f.burst) {
			delete(f.addrs, a)
		}
	}
	if len(f.addrs) >= maxFailureAddrs {
		clear(f.addrs)
	}
}
