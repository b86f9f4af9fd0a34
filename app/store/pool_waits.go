package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// PoolKey names one concurrency pool key of a tenant.
type PoolKey struct {
	TenantID uuid.UUID
	Key      string
}

// PoolWaitKeys returns up to limit pool keys with attempts waiting, in
// order, after the given one (the zero key: from the start).
func (s *Store) PoolWaitKeys(ctx context.Context, after PoolKey, limit int) ([]PoolKey, error) {
	rows, err := s.q.FlowPoolWaitKeys(ctx, queries.FlowPoolWaitKeysParams{AfterTenant: after.TenantID, AfterKey: after.Key, MaxKeys: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("pool keys with waiters: %w", err)
	}
	out := make([]PoolKey, len(rows))
	for i, r := range rows {
		out[i] = PoolKey{TenantID: r.TenantID, Key: r.FlowKey}
	}
	return out, nil
}

// PoolWaiter is one attempt waiting for its pool: Woken once the sweep
// has made it due and before it is offered.
type PoolWaiter struct {
	RunID               uuid.UUID
	Node                string
	Generation, Attempt int
	Limit               int
	Woken               bool
}

// PoolWaitHeads returns the first limit attempts waiting for k, in the
// order they were held.
func (s *Store) PoolWaitHeads(ctx context.Context, k PoolKey, limit int) ([]PoolWaiter, error) {
	rows, err := s.q.FlowPoolWaitHeads(ctx, queries.FlowPoolWaitHeadsParams{TenantID: k.TenantID, FlowKey: k.Key, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("pool's waiting steps: %w", err)
	}
	out := make([]PoolWaiter, len(rows))
	for i, r := range rows {
		out[i] = PoolWaiter{RunID: r.RunID, Node: r.Node, Generation: int(r.Generation), Attempt: int(r.Attempt), Limit: int(r.FlowLimit), Woken: r.Woken}
	}
	return out, nil
}

// PoolWake makes the waiters of a tenant due at once, to be offered to
// their pool by the sweep.
func (s *Store) PoolWake(ctx context.Context, tenantID uuid.UUID, ws []PoolWaiter) error {
	if len(ws) == 0 {
		return nil
	}
	p := queries.FlowPoolWakeParams{TenantID: tenantID}
	for _, w := range ws {
		p.RunIds = append(p.RunIds, w.RunID)
		p.Nodes = append(p.Nodes, w.Node)
		p.Generations = append(p.Generations, int32(w.Generation))
		p.Attempts = append(p.Attempts, int32(w.Attempt))
	}
	if err := s.q.FlowPoolWake(ctx, p); err != nil {
		return fmt.Errorf("wake pool's waiting steps: %w", err)
	}
	return nil
}

// PoolHasWaiters says whether any attempt waits for k.
func (s *Store) PoolHasWaiters(ctx context.Context, k PoolKey) (bool, error) {
	ok, err := s.q.FlowPoolHasWaiters(ctx, queries.FlowPoolHasWaitersParams{TenantID: k.TenantID, FlowKey: k.Key})
	if err != nil {
		return false, fmt.Errorf("pool's waiting steps: %w", err)
	}
	return ok, nil
}
