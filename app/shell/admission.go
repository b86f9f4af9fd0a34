package shell

import (
	"context"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/store"
)

// capRecheck is how long a step held back by its tenant's concurrency cap
// waits before the sweep offers it again.
const capRecheck = 250 * time.Millisecond

// admit applies each tenant's admission limits (max_concurrency and
// rate_per_second) to a batch of step jobs: it returns the jobs that may be
// enqueued now and stores the rest in run_dispatch for later. The tenant's
// bucket row is locked meanwhile, so two replicas never admit past a limit
// together. Tenants without limits pass untouched.
func (c *Writer) admit(ctx context.Context, s *store.Store, jobs []river.InsertManyParams) ([]river.InsertManyParams, error) {
	byTenant := map[uuid.UUID][]river.InsertManyParams{}
	var order []uuid.UUID
	for _, j := range jobs {
		id := j.Args.(StepArgs).TenantID
		if byTenant[id] == nil {
			order = append(order, id)
		}
		byTenant[id] = append(byTenant[id], j)
	}
	out := jobs[:0:0]
	for _, id := range order {
		admitted, err := c.admitTenant(ctx, s, id, byTenant[id])
		if err != nil {
			return nil, err
		}
		out = append(out, admitted...)
	}
	return out, nil
}

func (c *Writer) admitTenant(ctx context.Context, s *store.Store, tenantID uuid.UUID, jobs []river.InsertManyParams) ([]river.InsertManyParams, error) {
	t, err := c.tenants.get(ctx, s, tenantID)
	if err != nil || (t.MaxConcurrency == 0 && t.RatePerSecond == 0) {
		return jobs, err
	}
	burst := math.Max(1, t.RatePerSecond)
	b, err := s.TenantBucketLock(ctx, tenantID, burst)
	if err != nil {
		return nil, err
	}
	free := -1
	if t.MaxConcurrency > 0 {
		q := jobs[0].InsertOpts.Queue
		inFlight, err := s.StepJobsInFlight(ctx, tenantID, []string{q, SparseLane(q)})
		if err != nil {
			return nil, err
		}
		free = max(0, t.MaxConcurrency-inFlight)
	}
	tokens := refill(b.Tokens, b.Now.Sub(b.UpdatedAt), t.RatePerSecond, burst)
	n, left, waits := admission(len(jobs), free, tokens, t.RatePerSecond)
	if err := s.TenantBucketSet(ctx, tenantID, left, b.Now); err != nil {
		return nil, err
	}
	for i, j := range jobs[n:] {
		if err := delayStep(ctx, s, j.Args.(StepArgs), j.InsertOpts.Queue, b.Now.Add(waits[i])); err != nil {
			return nil, err
		}
	}
	return jobs[:n], nil
}

// refill is a token bucket's level after elapsed time at rate, capped at
// burst; with no rate limit the bucket is always full.
func refill(tokens float64, elapsed time.Duration, rate, burst float64) float64 {
	if rate == 0 {
		return burst
	}
	return math.Min(burst, tokens+elapsed.Seconds()*rate)
}

// admission decides how many of n steps start now given free concurrency
// slots (-1: no cap) and a token bucket (rate 0: no limit), what is left in
// the bucket, and how long each held-back step waits before it is offered
// again: rate-limited steps are spaced at the rate, capped ones recheck.
func admission(n, free int, tokens, rate float64) (int, float64, []time.Duration) {
	now := n
	if free >= 0 {
		now = min(now, free)
	}
	if rate > 0 {
		now = min(now, int(math.Floor(tokens)))
		tokens -= float64(now)
	}
	waits := make([]time.Duration, n-now)
	for i := range waits {
		waits[i] = capRecheck
		if rate > 0 && (free < 0 || now < free) {
			waits[i] = time.Duration((float64(i+1) - tokens) / rate * float64(time.Second))
		}
	}
	return now, tokens, waits
}
