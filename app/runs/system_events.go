package runs

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/store"
)

// systemDispatchBatch is how many system events one DispatchSystem call
// dispatches at most.
const systemDispatchBatch = 100

// DispatchSystem dispatches the system events the unit of work stored
// (system_event_outbox) like Publish does a published event: each to the
// runs waiting for its name, the runs its event triggers start and, via
// Config.Outbound, the tenant's subscriptions. Each event goes in its
// own transaction, which takes it off the outbox: a crash before the
// commit leaves it there for the next call (in this process or another),
// so a committed transition's event is dispatched exactly once. It
// returns how many events it dispatched.
func (c *Events) DispatchSystem(ctx context.Context) (int, error) {
	keys, err := store.New(c.pool).SystemEventsDue(ctx, systemDispatchBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		ok, err := c.dispatchOne(ctx, k)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func (c *Events) dispatchOne(ctx context.Context, k store.EventKey) (bool, error) {
	e, err := store.New(c.pool).SystemEventPeek(ctx, k.TenantID, k.ID)
	if err != nil {
		return false, err
	}
	triggers, err := c.evalTriggers(ctx, e)
	if err != nil {
		return false, err
	}
	var taken bool
	err = store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		taken, err = store.New(tx).SystemEventTake(ctx, k.TenantID, k.ID)
		if err != nil || !taken {
			return err
		}
		if err := c.deliverEvent(ctx, tx, e); err != nil {
			return err
		}
		if err := c.startTriggered(ctx, tx, e, triggers); err != nil {
			return err
		}
		return c.outbound(ctx, tx, e)
	})
	return taken, err
}

// outbound hands an event to Config.Outbound, when set, in the
// transaction that stores or dispatches it.
func (c *Events) outbound(ctx context.Context, tx pgx.Tx, e store.Event) error {
	if c.Outbound == nil {
		return nil
	}
	return c.Outbound(ctx, tx, e)
}
