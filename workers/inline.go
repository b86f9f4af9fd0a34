package workers

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// tickInline runs the run's tick inside tx, in a savepoint, when the run
// row can be locked without waiting: a step worker that has just stored its
// result dispatches the next step itself, saving a whole job hop. It
// reports false (and leaves tx as it was) when the run is busy or the tick
// fails; the caller then wakes the run's tick job as usual.
func (c *Coordinator) tickInline(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, in engine.Input) (bool, error) {
	if !c.InlineTicks {
		return false, nil
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	ok, err := c.tickLocked(ctx, sp, tenantID, runID, in)
	if err != nil || !ok {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return false, rbErr
		}
		if err != nil && !errors.Is(err, store.ErrConflict) {
			c.log.WarnContext(ctx, "inline tick failed; handing over to a tick job", "run_id", runID, "err", err)
		}
		return false, nil
	}
	return true, sp.Commit(ctx)
}

// tickLocked locks the run without waiting and ticks it with the input
// (if any) handed straight to the engine.
func (c *Coordinator) tickLocked(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, in engine.Input) (bool, error) {
	if !c.InlineTicks {
		return false, nil
	}
	s := store.New(tx)
	locked, queued, err := s.RunLockNoWait(ctx, tenantID, runID)
	if err != nil || !locked || queued {
		// Busy, or a tick job is coming that will take this input with
		// the others: a hot run (a fan-out's children finishing) is ticked
		// in batches, not once per result.
		return false, err
	}
	defer c.observeTick("inline", time.Now())
	if in != nil {
		if in, err = store.NormalizeInput(in); err != nil {
			return false, err
		}
	}
	return true, c.tickTx(ctx, tx, tenantID, runID, tickOpts{locked: true, input: in})
}
