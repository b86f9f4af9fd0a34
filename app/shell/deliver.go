package shell

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// Deliver stores an input for the run and wakes it, inside tx. The wake
// comes first: it takes the run row's lock before the input's foreign key
// takes a weaker one, so a waiting tick never deadlocks with the delivery.
// A duplicate input (same dedup key) is dropped.
func (c *Writer) Deliver(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, in engine.Input) error {
	if err := c.Wake(ctx, tx, tenantID, runID); err != nil {
		return err
	}
	_, err := store.New(tx).RunInputAdd(ctx, tenantID, runID, in)
	return err
}

// DeliverMany stores inputs for a run's next tick and wakes it once.
func (c *Writer) DeliverMany(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, ins []engine.Input) error {
	if len(ins) == 1 {
		return c.Deliver(ctx, tx, tenantID, runID, ins[0])
	}
	if err := c.Wake(ctx, tx, tenantID, runID); err != nil {
		return err
	}
	return store.New(tx).RunInputAddMany(ctx, tenantID, runID, ins)
}

// DeliverAndTick stores an input and, when the run row is free, ticks the
// run right here in a savepoint; otherwise it wakes the run's tick job.
func (c *Ticker) DeliverAndTick(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, in engine.Input) error {
	ticked, err := c.tickInline(ctx, tx, tenantID, runID, in)
	if err != nil || ticked {
		return err
	}
	return c.w.Deliver(ctx, tx, tenantID, runID, in)
}
