package workers

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
)

// gateResult is what a run's throttle and concurrency rules say, read
// under their keys' locks: its throttle turn (zero without a throttle)
// and, once that has come, its concurrency plan.
type gateResult struct {
	keys flowcontrol.Keys
	now  time.Time
	turn time.Time
	plan flowcontrol.Plan
}

// throttled reports a run whose throttle turn is still to come.
func (g gateResult) throttled() bool { return g.turn.After(g.now) }

// flowGate reads a run's keys' state and decides. The caller holds the keys'
// locks.
func (c *Coordinator) flowGate(ctx context.Context, s *store.Store, n store.NewRun, keys flowcontrol.Keys, now time.Time) (gateResult, error) {
	g := gateResult{keys: keys, now: now, turn: now}
	if w := keys.Throttle; w != nil {
		latest, err := s.FlowStartsLatest(ctx, n.TenantID, store.FlowKey{Pool: w.Pool, Key: w.Key}, w.Limit)
		if err != nil {
			return g, err
		}
		if g.turn = flowcontrol.NextStart(now, latest, *w); g.throttled() {
			return g, nil
		}
	}
	states := make([]flowcontrol.KeyState, len(keys.Slots))
	for i, sl := range keys.Slots {
		k := store.FlowKey{Pool: sl.Pool, Key: sl.Key}
		st, err := s.FlowKeyCount(ctx, n.TenantID, k)
		if err != nil {
			return g, err
		}
		states[i] = flowcontrol.KeyState{Held: st.Held, Waiting: st.Waiting}
		if sl.Strategy != definition.StrategyCancelInProgress || flowcontrol.Free(states[i], sl.Limit) {
			continue
		}
		oldest, err := s.FlowKeyOldest(ctx, n.TenantID, k, st.Held+st.Waiting)
		if err != nil {
			return g, err
		}
		for _, id := range oldest {
			if id != n.ID {
				states[i].Oldest = append(states[i].Oldest, id.String())
			}
		}
	}
	g.plan = flowcontrol.Decide(keys.Slots, states)
	return g, nil
}

// refusal is a cancel_newest rule's answer to a start over its limit.
func (g gateResult) refusal(definitionKey string) error {
	sl := g.plan.Refused
	return apperr.New(apperr.ConcurrencyLimit, "concurrency_limit: concurrency[%d] allows %d runs of %s%s at once",
		sl.Rule, sl.Limit, definitionKey, keyText(sl.Key)).
		WithDetails(map[string]any{"rule": fmt.Sprintf("concurrency[%d]", sl.Rule), "key": sl.Key, "limit": sl.Limit})
}

// passed is what a run did at its gate.
type passed int

const (
	passAdmitted passed = iota // its slots are held: it starts
	passHeld                   // it waits for its throttle turn or its slots
	passRefused                // cancel_newest refused it: it is being cancelled
)

// passGate records what g decided for run, which exists (held unless it
// is admitted at its creation): its throttle turn, its slots held or
// waited for, its hold, the runs cancel_in_progress cancels for it, or
// its own cancellation by cancel_newest. It does not admit a held run:
// the caller does (releaseHeld).
func (c *Coordinator) passGate(ctx context.Context, tx pgx.Tx, s *store.Store, run store.Run, g gateResult) (passed, error) {
	if w := g.keys.Throttle; w != nil {
		if err := s.FlowStartAdd(ctx, run.TenantID, store.FlowKey{Pool: w.Pool, Key: w.Key}, g.turn, run.ID, w.Period); err != nil {
			return 0, err
		}
		if g.throttled() {
			c.flowMetrics.decided(ctx, flowcontrol.KindThrottle, "held")
			return passHeld, s.FlowHoldSet(ctx, run.TenantID, run.ID, store.StageThrottle, &g.turn, []store.FlowRule{{Rule: "throttle", Key: w.Key}})
		}
	}
	slots := flowSlots(run.DefinitionKey, g.keys.Slots)
	switch g.plan.Verdict {
	case flowcontrol.Refuse:
		c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "refused")
		reason := g.refusal(run.DefinitionKey).Error()
		return passRefused, c.Deliver(ctx, tx, run.TenantID, run.ID, engine.Cancel{RequestID: "concurrency_limit", Reason: reason})
	case flowcontrol.Queue:
		c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "queued")
		if err := s.FlowSlotsAdd(ctx, run.TenantID, run.ID, slots, false); err != nil {
			return 0, err
		}
		if err := s.FlowHoldSet(ctx, run.TenantID, run.ID, store.StageConcurrency, nil, slotRules(g.keys.Slots)); err != nil {
			return 0, err
		}
		return passHeld, c.cancelInProgress(ctx, tx, s, run, g.plan.Cancel)
	}
	if len(slots) > 0 {
		c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "started")
	}
	return passAdmitted, s.FlowSlotsAdd(ctx, run.TenantID, run.ID, slots, true)
}

func flowSlots(definitionKey string, slots []flowcontrol.Slot) []store.FlowSlot {
	out := make([]store.FlowSlot, len(slots))
	for i, sl := range slots {
		out[i] = store.FlowSlot{Pool: sl.Pool, Key: sl.Key, Limit: sl.Limit, Strategy: string(sl.Strategy), DefinitionKey: definitionKey, Rule: sl.Rule}
	}
	return out
}

func slotRules(slots []flowcontrol.Slot) []store.FlowRule {
	out := make([]store.FlowRule, len(slots))
	for i, sl := range slots {
		out[i] = store.FlowRule{Rule: fmt.Sprintf("concurrency[%d]", sl.Rule), Key: sl.Key, Limit: sl.Limit}
	}
	return out
}

// cancelInProgress cancels the runs a new run takes the place of. They
// keep their slots until they end, and the new run waits for them.
func (c *Coordinator) cancelInProgress(ctx context.Context, tx pgx.Tx, s *store.Store, run store.Run, victims []string) error {
	seen := map[uuid.UUID]bool{}
	var ids []uuid.UUID
	for _, v := range victims {
		id := uuid.MustParse(v)
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := s.FlowSlotsCancelling(ctx, run.TenantID, ids); err != nil {
		return err
	}
	for _, id := range ids {
		in := engine.Cancel{RequestID: "cancel_in_progress:" + run.ID.String(), Reason: "cancel_in_progress: run " + run.ID.String() + " takes its place"}
		if err := c.Deliver(ctx, tx, run.TenantID, id, in); err != nil {
			return err
		}
		c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "cancelled")
	}
	return nil
}
