package shell

import (
	"context"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// startSuccessor creates the ContinueAsNew successor on the run's own
// version (the one it started on, or was upgraded to: docs/upgrades.md),
// carrying its input (or the new one), subject, lineage, context and
// search attributes. Its id is derived from (run id, request id), so a
// repeated request creates nothing twice. It inherits the concurrency
// slots the run holds, and is not held back by flow control itself. When
// the run's version was unpublished the successor starts on the newest
// version still published, as a new run would; a definition with no
// published version cannot continue: the run is then force-stopped with
// reason transition_limit instead.
func (b *commandBatch) startSuccessor(ctx context.Context, cmd engine.StartSuccessor) error {
	v, err := b.successorVersion(ctx)
	if apperr.Is(err, apperr.NotFound) {
		b.cannotContinue = true
		return nil
	}
	if err != nil {
		return err
	}
	id := uuid.MustParse(engine.SuccessorRunID(b.run.ID.String(), cmd.RequestID))
	l := lineage{parent: b.run.ParentRunID, root: b.run.RootRunID, depth: b.run.Depth, link: b.run.State.Parent, from: &b.run.ID}
	context, _ := b.run.State.Meta["context"].(map[string]any)
	n := newRun(v, id, l, cmd.Input, b.run.Subject, context, b.run.SearchAttributes)
	n.TenantID = b.run.TenantID
	buffered, err := b.s.SignalsBuffered(ctx, b.run.TenantID, b.run.ID)
	if err != nil {
		return err
	}
	n.State.BufferedSignals = len(buffered)
	n.State.Trace = b.c.tracing.ChildRun(ctx, b.run.State.Trace)
	b.c.manifests.Store(v.ManifestHash, v.Manifest)
	if next, created, err := b.s.RunCreate(ctx, n); err != nil {
		return err
	} else if created {
		b.c.obs.RunStarted(ctx, next)
		if err := b.c.enqueueTick(ctx, b.tx, b.run.TenantID, id); err != nil {
			return err
		}
	}
	// The successor goes on in the run's concurrency slots: it takes
	// them over in the commit that ends the run.
	if err := b.s.FlowSlotsInherit(ctx, b.run.TenantID, b.run.ID, id); err != nil {
		return err
	}
	// Buffered signals follow the run; the dedup set is keyed by the chain,
	// so a signal retried after the switch is still a duplicate.
	if _, err := b.s.SignalsMove(ctx, b.run.TenantID, b.run.ID, id); err != nil {
		return err
	}
	b.successor = id.String()
	return nil
}

// successorVersion is the run's own version while it is published, else
// the newest one that is.
func (b *commandBatch) successorVersion(ctx context.Context) (store.DefinitionVersion, error) {
	own, err := b.s.DefinitionVersionGet(ctx, b.run.TenantID, b.run.DefinitionKey, b.run.DefinitionVersion)
	if err == nil && own.UnpublishedAt == nil {
		return own, nil
	}
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return own, err
	}
	return b.c.Version(ctx, b.s, b.run.TenantID, b.run.DefinitionKey, 0)
}
