package shell

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
)

// flowBatch bounds the held runs one pass looks at.
const flowBatch = 100

// flowOnce lets held runs go whose time has come, each in a transaction
// of its own: a debounce gone quiet or a throttle turn come moves its run
// on to the rules after it, and the first run waiting for a slot of a key
// that has one free takes its slots and starts. It also forgets what
// counts no more (the slots of ended runs, starts past their period). A
// run whose keys another transaction holds is left for the next pass.
// It returns how many runs it looked at.
func (c *Sweeper) flowOnce(ctx context.Context) (int, error) {
	s := store.New(c.pool)
	due, err := s.FlowHoldsDue(ctx, flowBatch)
	if err != nil {
		return 0, err
	}
	for _, k := range due {
		c.inFlowTx(ctx, k, c.releaseDue)
	}
	heads, err := s.FlowWaitingHeads(ctx, flowBatch)
	if err != nil {
		return 0, err
	}
	for _, k := range heads {
		c.inFlowTx(ctx, k, c.w.admitWaiting)
	}
	if _, err := s.FlowHoldsEnded(ctx, sweepBatch); err != nil {
		return 0, err
	}
	swept, err := s.FlowSweep(ctx, sweepBatch)
	return max(len(due), len(heads), swept), err
}

// FlowSweep runs flowOnce until a pass finds less than a batch.
func (c *Sweeper) FlowSweep(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := c.flowOnce(ctx)
		if err != nil && ctx.Err() == nil {
			c.log.ErrorContext(ctx, "flow control sweep", "err", err)
		}
		if err != nil || n < flowBatch {
			return
		}
	}
}

// inFlowTx runs fn for one held run in a transaction, logging what fails
// (the run is looked at again next pass).
func (c *Sweeper) inFlowTx(ctx context.Context, k store.RunKey, fn func(context.Context, pgx.Tx, store.RunKey) error) {
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error { return fn(ctx, tx, k) })
	if err != nil && ctx.Err() == nil {
		c.log.ErrorContext(ctx, "flow control", "tenant_id", k.TenantID, "run_id", k.ID, "err", err)
	}
}

// errBusy: another transaction holds one of the run's keys.
var errBusy = errors.New("flow keys busy")

// releaseDue moves a held run on from a debounce gone quiet or a
// throttle turn come: its throttle (after a debounce) and its concurrency
// rules decide next, on the input it has now.
func (c *Sweeper) releaseDue(ctx context.Context, tx pgx.Tx, k store.RunKey) error {
	s := store.New(tx)
	h, run, ok, err := c.w.heldRun(ctx, s, k)
	if err != nil || !ok || h.Stage == store.StageConcurrency {
		return err
	}
	m, err := c.Manifest(ctx, s, run)
	if err != nil {
		return err
	}
	keys, err := flowcontrol.Evaluate(ctx, c.engine.Eval, m, flowVars(run.State), flowcontrol.StageRelease)
	if err != nil {
		return c.w.refuseHeld(ctx, tx, s, run, keyProblem(err).Error())
	}
	locks := lockKeys(keys)
	if h.Stage == store.StageThrottle {
		keys.Throttle = nil // its turn has come
	}
	if h.Stage == store.StageDebounce {
		d, found, err := s.FlowDebounceOf(ctx, run.TenantID, run.ID)
		if err != nil {
			return err
		}
		if found {
			locks = append(locks, d)
		}
	}
	if err := c.w.lockHeld(ctx, s, run, locks); err != nil {
		return ignoreBusy(err)
	}
	// Decide on what is there once the keys are locked: the hold may have
	// been put off, and the input replaced, meanwhile.
	now, still, err := c.w.stillDue(ctx, s, h, run)
	if err != nil || !still {
		return err
	}
	if h.Stage == store.StageDebounce {
		if err := s.FlowDebounceClose(ctx, run.TenantID, run.ID); err != nil {
			return err
		}
	}
	st, _, err := loadFlowState(ctx, s, run.TenantID, keys)
	if err != nil {
		return err
	}
	v, w := flowcontrol.Decide(st, flowcontrol.Start{Run: run.ID.String(), Keys: keys}, now)
	if err := c.w.writeFlow(ctx, tx, s, run, v, w); err != nil {
		return err
	}
	return c.w.afterGate(ctx, tx, s, run, v.Outcome)
}

// heldRun reads a held run and its hold; ok is false when it is not held
// any more (its hold is forgotten if its run went meanwhile).
func (c *Writer) heldRun(ctx context.Context, s *store.Store, k store.RunKey) (store.FlowHold, store.Run, bool, error) {
	h, err := s.FlowHoldGet(ctx, k.TenantID, k.ID)
	if apperr.Is(err, apperr.NotFound) {
		return h, store.Run{}, false, nil
	}
	if err != nil {
		return h, store.Run{}, false, err
	}
	run, err := s.RunGet(ctx, k.TenantID, k.ID)
	if err != nil {
		return h, run, false, err
	}
	if run.Status != engine.RunPending || !run.State.Held {
		return h, run, false, s.FlowHoldRelease(ctx, k.TenantID, k.ID)
	}
	return h, run, true, nil
}

func (c *Writer) lockHeld(ctx context.Context, s *store.Store, run store.Run, keys []store.FlowKey) error {
	ok, err := s.FlowTryLock(ctx, run.TenantID, keys)
	if err == nil && !ok {
		err = errBusy
	}
	return err
}

func ignoreBusy(err error) error {
	if errors.Is(err, errBusy) {
		return nil
	}
	return err
}

// stillDue reads the hold and the run again, under the keys' locks: the
// same stage, due by the database's clock, and the input the keys were
// evaluated on.
func (c *Writer) stillDue(ctx context.Context, s *store.Store, was store.FlowHold, run store.Run) (time.Time, bool, error) {
	h, err := s.FlowHoldGet(ctx, run.TenantID, run.ID)
	if apperr.Is(err, apperr.NotFound) {
		return h.Now, false, nil
	}
	if err != nil {
		return h.Now, false, err
	}
	if h.Stage != was.Stage || h.DueAt == nil || h.DueAt.After(h.Now) || h.RunStatus != engine.RunPending {
		return h.Now, false, nil
	}
	again, err := s.RunGet(ctx, run.TenantID, run.ID)
	if err != nil {
		return h.Now, false, err
	}
	return h.Now, reflect.DeepEqual(again.State.Input, run.State.Input), nil
}
