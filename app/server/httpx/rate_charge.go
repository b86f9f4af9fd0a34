package httpx

import (
	"math"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// rateBucketKey holds the token bucket of the request's API key, for a
// handler that does the work of several requests to charge them.
const rateBucketKey = "ductor.rate_bucket"

// chargeRate takes n more requests from the key's rate budget (the
// request itself was one): 429 with Retry-After when the bucket lacks
// them, 422 when n is more than a burst, which no wait would give. It
// takes nothing when the rate is off.
func chargeRate(c echo.Context, n int, what string) error {
	b, _ := c.Get(rateBucketKey).(*rate.Limiter)
	if b == nil || n <= 0 {
		return nil
	}
	if n+1 > b.Burst() {
		return apperr.New(apperr.Unprocessable,
			"%s costs %d requests of the key's rate, more than its burst of %d: do it in parts", what, n+1, b.Burst())
	}
	now := time.Now()
	r := b.ReserveN(now, n)
	wait := r.DelayFrom(now)
	if wait == 0 {
		return nil
	}
	r.CancelAt(now)
	secs := int(math.Ceil(wait.Seconds()))
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return apperr.New(apperr.RateLimited,
		"%s costs %d requests of the key's rate of %g a second; retry in %d s", what, n+1, float64(b.Limit()), secs)
}

// ChargeBackfill charges a backfill one request for each time its range
// holds, the time of the request included: a backfill starts no more runs
// than as many POST /runs would under the key's rate. Times already acted
// on are charged too.
func ChargeBackfill(c echo.Context, s *store.Store, from, to time.Time) error {
	if !to.After(from) {
		return nil // BackfillSchedule refuses it
	}
	sc, err := s.ScheduleGet(c.Request().Context(), TenantOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	plan, err := sc.Compiled()
	if err != nil {
		return apperr.Wrap(err, apperr.Unprocessable, "spec."+err.Error())
	}
	times, _ := plan.Between(from, to, runs.MaxBackfill)
	return chargeRate(c, len(times)-1, "a backfill of "+strconv.Itoa(len(times))+" times")
}
