package workers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// Deliver stores an input for the run and wakes it, inside tx. A duplicate
// input (same dedup key) is dropped without waking anyone.
func (c *Coordinator) Deliver(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, in engine.Input) error {
	added, err := store.New(tx).RunInputAdd(ctx, tenantID, runID, in)
	if err != nil || !added {
		return err
	}
	return c.Wake(ctx, tx, tenantID, runID)
}

// deliverAndTick stores an input and runs the tick right here when the run
// is free, else wakes its tick job.
func (c *Coordinator) deliverAndTick(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, in engine.Input) error {
	added, err := store.New(tx).RunInputAdd(ctx, tenantID, runID, in)
	if err != nil || !added {
		return err
	}
	ticked, err := c.tickInline(ctx, tx, tenantID, runID)
	if err != nil || ticked {
		return err
	}
	return c.Wake(ctx, tx, tenantID, runID)
}
