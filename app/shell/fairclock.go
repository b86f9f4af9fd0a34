package shell

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/store"
)

// fairClock reserves spans of tenants' virtual time outside the caller's
// transaction, on connections of its own. Inside a tick's transaction the
// tenant's clock row would stay locked until the tick commits, and every
// step worker of that tenant would queue behind the one ticking: the
// clock would serialize the tenant's whole throughput. A reserved span that
// its transaction never uses is harmless: the tenant's next work merely
// queues a little later in virtual time. Concurrent reservations go in
// groups (see grouper), one statement and one row lock per tenant a group.
type fairClock struct {
	pool *pgxpool.Pool
	g    grouper[*clockRequest]
}

type clockRequest struct {
	key  store.FairClockKey
	span time.Duration
	tag  store.FairTag
	err  error
	done chan struct{}
}

// newFairClock opens (lazily) a pool of two connections like base's. Its
// commits need not wait for the disk: a clock that loses its last advances
// in a crash only orders the next jobs slightly differently.
func newFairClock(base *pgxpool.Pool) (*fairClock, error) {
	cfg := base.Config().Copy()
	cfg.MaxConns = 2
	cfg.MinConns = 0
	cfg.MaxConnIdleTime = time.Minute
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	cfg.ConnConfig.RuntimeParams["application_name"] = "ductor-fair-clock"
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("fair clock pool: %w", err)
	}
	f := &fairClock{pool: pool}
	f.g = grouper[*clockRequest]{limit: 1000, flushers: 1, write: f.send}
	return f, nil
}

func (f *fairClock) close() { f.pool.Close() }

// advance reserves span of the tenant's virtual time on queue and returns
// the start tag of the span, sparse when the tenant had nothing queued
// while others had.
func (f *fairClock) advance(ctx context.Context, tenantID uuid.UUID, queue string, span time.Duration) (store.FairTag, error) {
	r := &clockRequest{key: store.FairClockKey{TenantID: tenantID, Queue: queue}, span: span, done: make(chan struct{})}
	f.g.submit(r)
	select {
	case <-r.done:
		return r.tag, r.err
	case <-ctx.Done():
		return store.FairTag{}, ctx.Err()
	}
}

// send advances each (tenant, queue) once by the sum of its requests'
// spans and hands each request its slice of the reserved span, in arrival
// order; only the first slice can be sparse, the others queue behind it.
func (f *fairClock) send(group []*clockRequest) {
	spans := map[store.FairClockKey]time.Duration{}
	var keys []store.FairClockKey
	for _, r := range group {
		if _, ok := spans[r.key]; !ok {
			keys = append(keys, r.key)
		}
		spans[r.key] += r.span
	}
	spanList := make([]time.Duration, len(keys))
	for i, k := range keys {
		spanList[i] = spans[k]
	}
	// The statement must not die with the context of whichever caller
	// happens to lead.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tags, err := store.New(f.pool).FairClockAdvanceMany(ctx, keys, spanList)
	cancel()
	next := map[store.FairClockKey]store.FairTag{}
	for i, k := range keys {
		if err == nil {
			next[k] = tags[i]
		}
	}
	for _, r := range group {
		if err != nil {
			r.err = err
		} else {
			r.tag = next[r.key]
			next[r.key] = store.FairTag{Start: r.tag.Start.Add(r.span)}
		}
		close(r.done)
	}
}
