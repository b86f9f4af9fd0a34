package shell

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
)

// afterGate finishes a held run's pass through its gate: a started run
// is let go, a refused one forgets its hold (it is being cancelled).
func (c *Writer) afterGate(ctx context.Context, tx pgx.Tx, s *store.Store, run store.Run, o flowcontrol.Outcome) error {
	switch o {
	case flowcontrol.Started:
		return c.admitHeld(ctx, tx, s, run)
	case flowcontrol.Refused:
		return s.FlowHoldRelease(ctx, run.TenantID, run.ID)
	}
	return nil
}

// admitHeld lets a held run start: its hold is forgotten and its next
// tick starts it.
func (c *Writer) admitHeld(ctx context.Context, tx pgx.Tx, s *store.Store, run store.Run) error {
	if err := s.FlowHoldRelease(ctx, run.TenantID, run.ID); err != nil {
		return err
	}
	c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "admitted")
	return c.Deliver(ctx, tx, run.TenantID, run.ID, engine.Admit{})
}

// refuseHeld cancels a held run that its rules cannot let go (a key
// expression fails on the input a debounce left it).
func (c *Writer) refuseHeld(ctx context.Context, tx pgx.Tx, s *store.Store, run store.Run, reason string) error {
	if err := s.FlowHoldRelease(ctx, run.TenantID, run.ID); err != nil {
		return err
	}
	if err := s.FlowDebounceClose(ctx, run.TenantID, run.ID); err != nil {
		return err
	}
	return c.Deliver(ctx, tx, run.TenantID, run.ID, engine.Cancel{RequestID: "flow_control", Reason: reason})
}

// admitWaiting lets the first run waiting for a slot take its slots when
// every one of its keys has one free and no run waits before it there.
// It decides on what it loads, in one read, once the keys are locked.
func (c *Writer) admitWaiting(ctx context.Context, tx pgx.Tx, k store.RunKey) error {
	s := store.New(tx)
	slots, err := s.FlowSlotsOf(ctx, k.TenantID, k.ID)
	if err != nil || len(slots) == 0 {
		return err
	}
	keys := make([]store.FlowKey, len(slots))
	for i, sl := range slots {
		keys[i] = store.FlowKey{Pool: sl.Pool, Key: sl.Key}
	}
	h, run, ok, err := c.heldRun(ctx, s, k)
	if err != nil || !ok || h.Stage != store.StageConcurrency {
		return err
	}
	if err := c.lockHeld(ctx, s, run, keys); err != nil {
		return ignoreBusy(err)
	}
	if h, run, ok, err = c.heldRun(ctx, s, k); err != nil || !ok || h.Stage != store.StageConcurrency {
		return err
	}
	if ok, err := admits(ctx, s, run, slots); err != nil || !ok {
		return err
	}
	if err := s.FlowSlotsTake(ctx, run.TenantID, run.ID); err != nil {
		return err
	}
	return c.admitHeld(ctx, tx, s, run)
}

// admits loads the state of a waiting run's keys in one read and
// reports whether the run takes its slots now (flowcontrol.Admits).
func admits(ctx context.Context, s *store.Store, run store.Run, slots []store.FlowSlot) (bool, error) {
	var q store.FlowStateQuery
	want := make([]flowcontrol.Slot, len(slots))
	for i, sl := range slots {
		q.Slots = append(q.Slots, store.FlowSlotKey{FlowKey: store.FlowKey{Pool: sl.Pool, Key: sl.Key}, Head: true})
		want[i] = flowcontrol.Slot{Rule: sl.Rule, Pool: sl.Pool, Key: sl.Key, Limit: sl.Limit}
	}
	st, err := s.FlowStateLoad(ctx, run.TenantID, q)
	if err != nil {
		return false, err
	}
	states := make([]flowcontrol.KeyState, len(st.Slots))
	for i, ks := range st.Slots {
		states[i] = flowcontrol.KeyState{Held: ks.Held, Waiting: ks.Waiting}
		if ks.Head != uuid.Nil {
			states[i].Head = ks.Head.String()
		}
	}
	return flowcontrol.Admits(run.ID.String(), want, states), nil
}
