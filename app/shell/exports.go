package shell

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/store"
)

// Remember keeps the manifest of a version just read, by hash, for the
// ticks of the runs it starts.
func (c *Writer) Remember(v store.DefinitionVersion) {
	c.manifests.Store(v.ManifestHash, v.Manifest)
}

// Urgent marks the trigger of a tenant with nothing queued as urgent
// work, which grouped bulk work yields to (see yieldGate), until the
// returned func is called.
func (c *Writer) Urgent(tenantID uuid.UUID) (done func()) {
	if c.busy.busy(tenantID) {
		return func() {}
	}
	c.gate.enter()
	return c.gate.leave
}

// CountFlow counts the flow control decisions a start made, once it is
// committed or refused (a start created again counts once).
func (c *Writer) CountFlow(t *FlowTally) { c.flowMetrics.count(t) }

// Inline reports whether starts and results tick their runs inline.
func (c *Ticker) Inline() bool { return !c.NoInlineTicks }

// WithTx runs fn in a transaction in which an inline tick (TickNew, with
// the ctx fn is given) may choose steps to run in this process; they run
// once it commits, and not at all when it fails before its commit (see
// "Local steps").
// Without local steps it is store.WithTx.
func (c *Ticker) WithTx(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	return c.withTx(ctx, fn)
}

// NewRootRun is a pending run of version v that starts a lineage of its
// own: no parent, no predecessor.
func NewRootRun(v store.DefinitionVersion, id uuid.UUID, input any, subject string, context, attrs map[string]any) store.NewRun {
	return newRun(v, id, lineage{root: id}, input, subject, context, attrs)
}

// EventDelivered counts the runs an event was delivered to.
func (c *Observer) EventDelivered(runs int) { c.metrics.deliveries.Add(float64(runs)) }

// Signalled counts a signal sent, by outcome.
func (c *Observer) Signalled(err error) { c.metrics.signals.WithLabelValues(outcome(err)).Inc() }

// Heartbeat counts a bridge task's heartbeat, by outcome.
func (c *Observer) Heartbeat(err error) { c.metrics.heartbeats.WithLabelValues(outcome(err)).Inc() }
