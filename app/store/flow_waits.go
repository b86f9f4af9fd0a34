package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/queries"
)

// FlowWait is what a held run waits for, for people: the stage (a
// debounce's quiet, a throttle's turn, concurrency slots), since and
// until when, and each rule with its key (and, waiting for slots, how
// many runs wait before it).
type FlowWait struct {
	Stage string         `json:"stage"`
	Since time.Time      `json:"since"`
	Until *time.Time     `json:"until"`
	Rules []FlowRuleWait `json:"rules"`
}

// FlowRuleWait is one rule a held run waits on.
type FlowRuleWait struct {
	Rule  string `json:"rule"`
	Key   string `json:"key"`
	Limit int    `json:"limit,omitempty"`
	Ahead *int   `json:"ahead,omitempty"`
}

// FlowWaitOf says what a held run waits for; found is false when flow
// control does not hold it.
func (s *Store) FlowWaitOf(ctx context.Context, tenantID, runID uuid.UUID) (FlowWait, bool, error) {
	h, err := s.FlowHoldGet(ctx, tenantID, runID)
	if apperr.Is(err, apperr.NotFound) {
		return FlowWait{}, false, nil
	}
	if err != nil {
		return FlowWait{}, false, err
	}
	w := FlowWait{Stage: h.Stage, Since: h.Since, Until: h.DueAt, Rules: []FlowRuleWait{}}
	if h.Stage != StageConcurrency {
		for _, r := range h.Rules {
			w.Rules = append(w.Rules, FlowRuleWait{Rule: r.Rule, Key: r.Key, Limit: r.Limit})
		}
		return w, true, nil
	}
	rows, err := s.q.FlowSlotsAhead(ctx, queries.FlowSlotsAheadParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return w, false, fmt.Errorf("places in line: %w", err)
	}
	for _, r := range rows {
		ahead := int(r.Ahead)
		w.Rules = append(w.Rules, FlowRuleWait{Rule: fmt.Sprintf("concurrency[%d]", r.Rule), Key: r.Key, Limit: int(r.Limit), Ahead: &ahead})
	}
	return w, true, nil
}

// PoolWait is a step attempt its concurrency pool holds back.
type PoolWait struct {
	Generation, Attempt int
	Key                 string
	Limit               int
}

// PoolWaits are a run's attempts their pools hold back, by node.
func (s *Store) PoolWaits(ctx context.Context, tenantID, runID uuid.UUID) (map[string]PoolWait, error) {
	rows, err := s.q.FlowPoolWaits(ctx, queries.FlowPoolWaitsParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("pool waits: %w", err)
	}
	out := make(map[string]PoolWait, len(rows))
	for _, r := range rows {
		out[r.Node] = PoolWait{Generation: int(r.Generation), Attempt: int(r.Attempt), Key: r.FlowKey, Limit: int(r.FlowLimit)}
	}
	return out, nil
}

// StepFlowQueued counts a tenant's attempts one pool key holds back.
func (s *Store) StepFlowQueued(ctx context.Context, tenantID uuid.UUID, key string) (int, error) {
	n, err := s.q.FlowPoolQueued(ctx, queries.FlowPoolQueuedParams{TenantID: tenantID, FlowKey: key})
	if err != nil {
		return 0, fmt.Errorf("count pool's waiting steps: %w", err)
	}
	return int(n), nil
}
