package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// FlowSlot is a run's place under one concurrency rule.
type FlowSlot struct {
	Pool, Key     string
	Limit         int
	Strategy      string
	Held          bool
	Cancelling    bool
	DefinitionKey string
	Rule          int
}

// FlowSlotsAdd records a run's places under its concurrency rules:
// held, or waiting for a slot.
func (s *Store) FlowSlotsAdd(ctx context.Context, tenantID, runID uuid.UUID, slots []FlowSlot, held bool) error {
	if len(slots) == 0 {
		return nil
	}
	p := queries.FlowSlotInsertManyParams{TenantID: tenantID, RunID: runID, Held: held, DefinitionKey: slots[0].DefinitionKey}
	for _, sl := range slots {
		p.Pools = append(p.Pools, sl.Pool)
		p.Keys = append(p.Keys, sl.Key)
		p.Limits = append(p.Limits, int32(sl.Limit))
		p.Strategies = append(p.Strategies, sl.Strategy)
		p.Rules = append(p.Rules, int32(sl.Rule))
	}
	if err := s.q.FlowSlotInsertMany(ctx, p); err != nil {
		return fmt.Errorf("record slots: %w", err)
	}
	return nil
}

// FlowSlotsOf returns a run's slots, by rule.
func (s *Store) FlowSlotsOf(ctx context.Context, tenantID, runID uuid.UUID) ([]FlowSlot, error) {
	rows, err := s.q.FlowSlotsOfRun(ctx, queries.FlowSlotsOfRunParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("slots of run: %w", err)
	}
	out := make([]FlowSlot, len(rows))
	for i, r := range rows {
		out[i] = FlowSlot{Pool: r.Pool, Key: r.Key, Limit: int(r.Limit), Strategy: r.Strategy, Held: r.Held,
			Cancelling: r.Cancelling, DefinitionKey: r.DefinitionKey, Rule: int(r.Rule)}
	}
	return out, nil
}

// FlowSlotsTake makes a waiting run's slots held.
func (s *Store) FlowSlotsTake(ctx context.Context, tenantID, runID uuid.UUID) error {
	if err := s.q.FlowSlotsHold(ctx, queries.FlowSlotsHoldParams{TenantID: tenantID, RunID: runID}); err != nil {
		return fmt.Errorf("take slots: %w", err)
	}
	return nil
}

// FlowSlotsCancelling marks runs that cancel_in_progress is cancelling.
func (s *Store) FlowSlotsCancelling(ctx context.Context, tenantID uuid.UUID, runIDs []uuid.UUID) error {
	if err := s.q.FlowSlotCancelling(ctx, queries.FlowSlotCancellingParams{TenantID: tenantID, RunIds: runIDs}); err != nil {
		return fmt.Errorf("mark cancelling: %w", err)
	}
	return nil
}

// FlowSlotsInherit gives a ContinueAsNew successor the slots its
// predecessor holds.
func (s *Store) FlowSlotsInherit(ctx context.Context, tenantID, runID, successorID uuid.UUID) error {
	err := s.q.FlowSlotsInherit(ctx, queries.FlowSlotsInheritParams{TenantID: tenantID, RunID: runID, SuccessorID: successorID})
	if err != nil {
		return fmt.Errorf("inherit slots: %w", err)
	}
	return nil
}

// FlowWaitingHeads lists the runs first in line for a key with a free
// slot: candidates for admission, to be decided on under their keys'
// locks.
func (s *Store) FlowWaitingHeads(ctx context.Context, max int) ([]RunKey, error) {
	rows, err := s.q.FlowWaitingHeads(ctx, int32(max))
	if err != nil {
		return nil, fmt.Errorf("waiting heads: %w", err)
	}
	out := make([]RunKey, len(rows))
	for i, r := range rows {
		out[i] = RunKey{TenantID: r.TenantID, ID: r.RunID}
	}
	return out, nil
}

// FlowPoolCount is a pool's runs that have not ended: holding a slot
// (running), waiting for one, and the keys they are under.
type FlowPoolCount struct{ Running, Waiting, Keys int }

// FlowPoolCounts counts a tenant's runs of some definitions by pool.
func (s *Store) FlowPoolCounts(ctx context.Context, tenantID uuid.UUID, definitions []string) (map[string]FlowPoolCount, error) {
	rows, err := s.q.FlowRuleCounts(ctx, queries.FlowRuleCountsParams{TenantID: tenantID, DefinitionKeys: definitions})
	if err != nil {
		return nil, fmt.Errorf("count pools: %w", err)
	}
	out := map[string]FlowPoolCount{}
	for _, r := range rows {
		out[r.Pool] = FlowPoolCount{Running: int(r.Running), Waiting: int(r.Waiting), Keys: int(r.Keys)}
	}
	return out, nil
}

// FlowHoldCounts counts a tenant's held runs of a definition by stage.
func (s *Store) FlowHoldCounts(ctx context.Context, tenantID uuid.UUID, definition string) (map[string]int, error) {
	rows, err := s.q.FlowHoldCounts(ctx, queries.FlowHoldCountsParams{TenantID: tenantID, DefinitionKey: definition})
	if err != nil {
		return nil, fmt.Errorf("count holds: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Stage] = int(r.Runs)
	}
	return out, nil
}

// FlowGauge is one metric sample of flow control: runs of a tenant's
// definition under a rule (concurrency[N], debounce or throttle) in a
// state (running or queued).
type FlowGauge struct {
	TenantID             uuid.UUID
	Definition, Rule, As string
	Runs                 int
}

// FlowGauges reads every tenant's flow control samples.
func (s *Store) FlowGauges(ctx context.Context) ([]FlowGauge, error) {
	runs, err := s.q.FlowMetricsRuns(ctx)
	if err != nil {
		return nil, fmt.Errorf("flow metrics: %w", err)
	}
	var out []FlowGauge
	for _, r := range runs {
		rule := fmt.Sprintf("concurrency[%d]", r.Rule)
		out = append(out, FlowGauge{TenantID: r.TenantID, Definition: r.DefinitionKey, Rule: rule, As: "running", Runs: int(r.Running)},
			FlowGauge{TenantID: r.TenantID, Definition: r.DefinitionKey, Rule: rule, As: "queued", Runs: int(r.Queued)})
	}
	holds, err := s.q.FlowMetricsHolds(ctx)
	if err != nil {
		return nil, fmt.Errorf("flow metrics: %w", err)
	}
	for _, h := range holds {
		if h.Stage != StageConcurrency {
			out = append(out, FlowGauge{TenantID: h.TenantID, Definition: h.DefinitionKey, Rule: h.Stage, As: "queued", Runs: int(h.Runs)})
		}
	}
	return out, nil
}

// FlowStepGauge is one tenant's step attempts under concurrency pools:
// Running are admitted and unfinished (step jobs queued or running,
// bridge tasks unanswered), Queued are held back by their pool.
type FlowStepGauge struct {
	TenantID        uuid.UUID
	Running, Queued int
}

// FlowStepGauges reads every tenant's step attempts under concurrency
// pools, by tenant (never by key).
func (s *Store) FlowStepGauges(ctx context.Context) ([]FlowStepGauge, error) {
	by := map[uuid.UUID]*FlowStepGauge{}
	at := func(id uuid.UUID) *FlowStepGauge {
		if by[id] == nil {
			by[id] = &FlowStepGauge{TenantID: id}
		}
		return by[id]
	}
	rows, err := s.db.Query(ctx, stepFlowJobs)
	if err != nil {
		return nil, fmt.Errorf("flow step metrics: %w", err)
	}
	for rows.Next() {
		var id uuid.UUID
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("flow step metrics: %w", err)
		}
		at(id).Running += n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("flow step metrics: %w", err)
	}
	remote, err := s.q.FlowMetricsStepBridge(ctx)
	if err != nil {
		return nil, fmt.Errorf("flow step metrics: %w", err)
	}
	for _, r := range remote {
		at(r.TenantID).Running += int(r.Attempts)
	}
	queued, err := s.q.FlowMetricsStepQueued(ctx)
	if err != nil {
		return nil, fmt.Errorf("flow step metrics: %w", err)
	}
	for _, r := range queued {
		at(r.TenantID).Queued += int(r.Attempts)
	}
	out := make([]FlowStepGauge, 0, len(by))
	for _, g := range by {
		out = append(out, *g)
	}
	return out, nil
}

// StepFlowInFlight counts the attempts of a tenant's concurrency pool key
// admitted and not finished: its step jobs queued or running whose
// attempt has no result yet (River completes a job a little after its
// worker's result is recorded), and its unfinished bridge tasks.
func (s *Store) StepFlowInFlight(ctx context.Context, tenantID uuid.UUID, key string) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, stepFlowInFlight, tenantID.String(), key).Scan(&n); err != nil {
		return 0, fmt.Errorf("count pool's steps in flight: %w", err)
	}
	remote, err := s.q.BridgeTaskCountFlow(ctx, queries.BridgeTaskCountFlowParams{TenantID: tenantID, FlowKey: nullText(key)})
	if err != nil {
		return 0, fmt.Errorf("count pool's bridge tasks: %w", err)
	}
	return n + int(remote), nil
}
