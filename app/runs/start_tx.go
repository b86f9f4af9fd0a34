package runs

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
)

// startTx creates a run inside tx and wakes its first tick when tx
// commits: what a schedule's action or an event trigger starts, in the
// transaction that records why. The input is checked against the
// version's input_schema here, when the run starts. A repeated
// idempotency key returns the run it made, with created false. The run
// begins a trace of its own (or joins t.Parent's). Under flow control, a
// run held back is not woken, and one a cancel_newest rule refuses is
// created and cancelled rather than refused.
func (c *deps) startTx(ctx context.Context, tx pgx.Tx, t Trigger) (store.Run, bool, error) {
	s := store.New(tx)
	v, err := c.w.Version(ctx, s, t.TenantID, t.Definition, t.Version)
	if err != nil {
		return store.Run{}, false, err
	}
	if err := c.checkInput(v, t.Input); err != nil {
		return store.Run{}, false, err
	}
	if _, err := c.admit(ctx, s, t.TenantID); err != nil {
		return store.Run{}, false, err
	}
	c.w.Remember(v)
	id := uuid.New()
	n := shell.NewRootRun(v, id, t.Input, t.Subject, t.Context, t.SearchAttributes)
	n.TenantID, n.IdempotencyKey = t.TenantID, t.IdempotencyKey
	n.State.Trace = c.tracing.NewRun(ctx, t.Parent)
	run, created, startNow, err := c.w.CreateRun(ctx, tx, v.Manifest, n, true)
	if err != nil || !created {
		return run, created, err
	}
	c.obs.RunStarted(ctx, run)
	if !startNow {
		return run, true, nil
	}
	return run, true, c.w.Wake(ctx, tx, t.TenantID, run.ID)
}
