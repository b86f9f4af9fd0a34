package usage

import (
	"testing"
	"time"

	"github.com/ductor/ductor/app/apperr"
)

func TestQuotaUseStates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		used, limit int64
		want        string
	}{{0, -1, StateOK}, {1 << 40, -1, StateOK}, {79, 100, StateOK}, {80, 100, StateWarning}, {99, 100, StateWarning},
		{100, 100, StateExceeded}, {250, 100, StateExceeded}, {0, 0, StateExceeded}} {
		q := quotaUse(QuotaMonthlySteps, c.used, c.limit, 80, nil)
		if q.State != c.want {
			t.Errorf("%d of %d: %s, want %s", c.used, c.limit, q.State, c.want)
		}
		if (q.Limit == nil) != (c.limit < 0) {
			t.Errorf("%d of %d: limit %v", c.used, c.limit, q.Limit)
		}
	}
}

// A refused start waits until the quota's next period; a quota with no
// period (waiting runs, stored bytes) a minute.
func TestExceededRetriesAfterThePeriod(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
	s := New(Config{Now: func() time.Time { return now }})
	next := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	err := s.exceeded(quotaUse(QuotaMonthlySteps, 10, 10, 80, &next))
	var ae *apperr.Error
	if !apperr.Is(err, apperr.QuotaExceeded) || !asError(err, &ae) || ae.RetryAfter != time.Hour {
		t.Fatalf("error %v, Retry-After %v, want quota_exceeded after an hour", err, ae)
	}
	if err := s.exceeded(quotaUse(QuotaWaitingRuns, 5, 5, 80, nil)); !asError(err, &ae) || ae.RetryAfter != time.Minute {
		t.Fatalf("waiting runs: %v", err)
	}
}

func asError(err error, target **apperr.Error) bool {
	e, ok := err.(*apperr.Error)
	*target = e
	return ok
}
