package runs

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/sysevents"
)

// Publish stores a tenant event and, in the same transaction, delivers it
// to every run with a node waiting for its name (found through the
// (tenant, name) index of waiting nodes, not by looking at runs). Each
// run's tick evaluates match_expr; a node consumes an event at most once.
// A repeated idempotency key returns the first event and delivers nothing;
// with a different name or data, it is an IdempotencyMismatch when
// e.MatchRequest says the key names the request (the API's). The event
// also starts the runs its event triggers ask for (see startTriggered),
// whose expressions are evaluated before the transaction begins.
//
// The runs its triggers start join the trace of the span in ctx, when it
// carries one (WithCaller), as a run started through the API joins its
// caller's.
func (c *Events) Publish(ctx context.Context, e store.Event) (_ store.Event, created bool, err error) {
	defer func() { c.obs.Published(created, err) }()
	if e.Name == "" {
		return store.Event{}, false, apperr.New(apperr.Invalid, "name is required")
	}
	if sysevents.IsSystem(e.Name) {
		return store.Event{}, false, apperr.New(apperr.Invalid, "event names starting with "+sysevents.Prefix+" are Ductor's own: publish under another name")
	}
	if err := checkPayload("event data", "data", e.Data); err != nil {
		return store.Event{}, false, err
	}
	if e.ID == uuid.Nil {
		e.ID = uuid.New()
	}
	if e.IdempotencyKey != "" && e.MatchRequest {
		hash, err := store.RequestHash(map[string]any{"name": e.Name, "data": e.Data})
		if err != nil {
			return store.Event{}, false, err
		}
		e.RequestHash = hash
	}
	triggers, err := c.evalTriggers(ctx, e)
	if err != nil {
		return store.Event{}, false, err
	}
	var out store.Event
	err = store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		out, created, err = store.New(tx).EventAdd(ctx, e)
		if err != nil || !created {
			return err
		}
		if err := c.deliverEvent(ctx, tx, out); err != nil {
			return err
		}
		if err := c.startTriggered(ctx, tx, out, triggers); err != nil {
			return err
		}
		return c.outbound(ctx, tx, out)
	})
	return out, created, err
}

func (c *Events) deliverEvent(ctx context.Context, tx pgx.Tx, e store.Event) error {
	runs, err := store.New(tx).EventWaitingRuns(ctx, e.TenantID, e.Name)
	if err != nil {
		return err
	}
	in := engine.EventMatched{EventID: e.ID.String(), Name: e.Name, Data: e.Data}
	c.obs.EventDelivered(len(runs))
	for _, runID := range runs {
		if err := c.w.Deliver(ctx, tx, e.TenantID, runID, in); err != nil {
			return err
		}
	}
	return nil
}

// WithCaller returns ctx carrying the caller's span (an inbound
// traceparent), for Publish; an invalid span leaves ctx as it is.
func WithCaller(ctx context.Context, caller trace.SpanContext) context.Context {
	if !caller.IsValid() {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, caller)
}
