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

// RateLimit gives every API key a token bucket of perSecond requests a
// second with bursts of twice as many; a request over it is refused with
// 429 and Retry-After. Each process keeps its own buckets, so a key talking
// to several API replicas gets the limit from each. perSecond 0 turns the
// limit off.
func RateLimit(perSecond float64) echo.MiddlewareFunc {
	if perSecond <= 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	burst := max(1, int(2*perSecond))
	var buckets sync.Map // API key id → *rate.Limiter
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p, ok := PrincipalOf(c)
			if !ok {
				return next(c)
			}
			b, _ := buckets.Load(p.Key.ID)
			if b == nil {
				b, _ = buckets.LoadOrStore(p.Key.ID, rate.NewLimiter(rate.Limit(perSecond), burst))
			}
			now := time.Now()
			r := b.(*rate.Limiter).ReserveN(now, 1)
			wait := r.DelayFrom(now)
			if wait == 0 {
				c.Set(rateBucketKey, b)
				return next(c)
			}
			r.CancelAt(now)
			secs := int(math.Ceil(wait.Seconds()))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			return apperr.New(apperr.RateLimited,
				"API key %s is over its limit of %g requests a second (bursts of %d); retry in %d s", p.Key.Prefix, perSecond, burst, secs)
		}
	}
}
