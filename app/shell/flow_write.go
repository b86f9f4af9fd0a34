package shell

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
)

// refusal is a cancel_newest rule's answer to a start over its limit.
func refusal(sl *flowcontrol.Slot, definitionKey string) error {
	return apperr.New(apperr.ConcurrencyLimit, "concurrency_limit: concurrency[%d] allows %d runs of %s%s at once",
		sl.Rule, sl.Limit, definitionKey, keyText(sl.Key)).
		WithDetails(map[string]any{"rule": fmt.Sprintf("concurrency[%d]", sl.Rule), "key": sl.Key, "limit": sl.Limit})
}

// writeFlow records what a start's verdict writes for run, which exists
// (held unless it is started at once): the starts its throttle and rate
// limit count, its debounce opened, its slots held or waited for, its
// hold; then the runs cancel_in_progress cancels for it, or its own
// cancellation by cancel_newest. It does not admit a held run: the
// caller does (afterGate).
func (c *Writer) writeFlow(ctx context.Context, tx pgx.Tx, s *store.Store, run store.Run, v flowcontrol.Verdict, w flowcontrol.Writes) error {
	for _, n := range w.Counts {
		if err := s.FlowStartAdd(ctx, run.TenantID, store.FlowKey{Pool: n.Pool, Key: n.Key}, n.At, run.ID, n.Period); err != nil {
			return err
		}
	}
	if o := w.Open; o != nil {
		if err := s.FlowDebounceBegin(ctx, run.TenantID, store.FlowKey{Pool: o.Pool, Key: o.Key}, run.ID, timeOrNil(o.MaxAt)); err != nil {
			return err
		}
	}
	if err := s.FlowSlotsAdd(ctx, run.TenantID, run.ID, flowSlots(run.DefinitionKey, w.Slots), w.SlotsHeld); err != nil {
		return err
	}
	if h := w.Hold; h != nil {
		if err := s.FlowHoldSet(ctx, run.TenantID, run.ID, string(h.Kind), timeOrNil(h.Due), holdRules(h.Rules)); err != nil {
			return err
		}
	}
	c.countVerdict(ctx, v, w)
	if v.Outcome == flowcontrol.Refused {
		reason := refusal(v.Refused, run.DefinitionKey).Error()
		return c.Deliver(ctx, tx, run.TenantID, run.ID, engine.Cancel{RequestID: "concurrency_limit", Reason: reason})
	}
	return c.cancelInProgress(ctx, tx, s, run, w.Cancel)
}

// countVerdict counts a verdict in the flow control metrics (a run
// cancel_in_progress cancels is counted as it is cancelled).
func (c *Writer) countVerdict(ctx context.Context, v flowcontrol.Verdict, w flowcontrol.Writes) {
	switch v.Outcome {
	case flowcontrol.Debounced:
		c.flowMetrics.decided(ctx, flowcontrol.KindDebounce, "held")
	case flowcontrol.Throttled:
		c.flowMetrics.decided(ctx, flowcontrol.KindThrottle, "held")
	case flowcontrol.Refused:
		c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "refused")
	case flowcontrol.Queued:
		c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "queued")
	case flowcontrol.Started:
		if len(w.Slots) > 0 {
			c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "started")
		}
	}
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func flowSlots(definitionKey string, slots []flowcontrol.Slot) []store.FlowSlot {
	out := make([]store.FlowSlot, len(slots))
	for i, sl := range slots {
		out[i] = store.FlowSlot{Pool: sl.Pool, Key: sl.Key, Limit: sl.Limit, Strategy: string(sl.Strategy), DefinitionKey: definitionKey, Rule: sl.Rule}
	}
	return out
}

func holdRules(rules []flowcontrol.Rule) []store.FlowRule {
	out := make([]store.FlowRule, len(rules))
	for i, r := range rules {
		out[i] = store.FlowRule{Rule: r.Rule, Key: r.Key, Limit: r.Limit}
	}
	return out
}

// cancelInProgress cancels the runs a new run takes the place of. They
// keep their slots until they end, and the new run waits for them.
func (c *Writer) cancelInProgress(ctx context.Context, tx pgx.Tx, s *store.Store, run store.Run, victims []string) error {
	if len(victims) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(victims))
	for i, v := range victims {
		ids[i] = uuid.MustParse(v)
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
