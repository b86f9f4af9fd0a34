package workers

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// MaxDepth bounds how deeply runs nest through subworkflows.
const MaxDepth = 32

// startChild creates the child run a node asked for, with an id derived
// from the node's key, so a re-executed tick creates nothing twice. A
// child that cannot start (too deep, unknown workflow) is answered at once
// with a failed ChildRunUpdate.
func (b *commandBatch) startChild(ctx context.Context, cmd engine.StartChildRun) error {
	if b.run.Depth+1 > MaxDepth {
		return b.childFailed(ctx, cmd.Node, "depth_exceeded",
			fmt.Sprintf("subworkflow %s would nest %d deep; the limit is %d", cmd.Workflow, b.run.Depth+1, MaxDepth))
	}
	v, err := b.childVersion(ctx, cmd)
	if apperr.Is(err, apperr.NotFound) {
		return b.childFailed(ctx, cmd.Node, "workflow_not_found", err.Error())
	}
	if err != nil {
		return err
	}
	id := uuid.MustParse(engine.ChildRunID(cmd.Key))
	var link *engine.ParentLink
	if cmd.Sync {
		link = &engine.ParentLink{RunID: b.run.ID.String(), Node: cmd.Node, Sync: true}
	}
	n := newRun(v, id, lineage{parent: &b.run.ID, root: b.run.RootRunID, depth: b.run.Depth + 1, link: link},
		cmd.Input, b.run.Subject, nil, nil)
	n.State.Trace = b.c.tracing.ChildRun(ctx, b.run.State.Trace)
	b.c.manifests.Store(v.ManifestHash, v.Manifest)
	child, created, err := b.s.RunCreate(ctx, n)
	if err != nil || !created {
		return err
	}
	b.c.runStarted(ctx, child)
	return b.c.enqueueTick(ctx, b.tx, b.run.TenantID, id)
}

func (b *commandBatch) childVersion(ctx context.Context, cmd engine.StartChildRun) (store.DefinitionVersion, error) {
	return b.c.version(ctx, b.s, b.run.TenantID, cmd.Workflow, cmd.Version)
}

func (b *commandBatch) childFailed(ctx context.Context, node, code, msg string) error {
	return b.c.Deliver(ctx, b.tx, b.run.TenantID, b.run.ID, engine.ChildRunUpdate{
		Node: node, Status: engine.RunFailed, Error: &engine.Error{Code: code, Message: msg}, NotStarted: true,
	})
}

// notifyParent tells a sync parent that its child ended or reached a
// checkpoint.
func (b *commandBatch) notifyParent(ctx context.Context, cmd engine.NotifyParent) error {
	parent, err := uuid.Parse(cmd.Parent.RunID)
	if err != nil {
		return fmt.Errorf("parent run id %q: %w", cmd.Parent.RunID, err)
	}
	return b.c.Deliver(ctx, b.tx, b.run.TenantID, parent, engine.ChildRunUpdate{
		Node: cmd.Parent.Node, Status: cmd.Status, Checkpoint: cmd.Checkpoint, Output: cmd.Output, Error: cmd.Error,
		ChildRunID: b.run.ID.String(),
	})
}

// cancelChild cancels a sync child run, if it was created.
func (b *commandBatch) cancelChild(ctx context.Context, cmd engine.CancelChildRun) error {
	id := uuid.MustParse(engine.ChildRunID(cmd.Key))
	if _, err := b.s.RunGet(ctx, b.run.TenantID, id); apperr.Is(err, apperr.NotFound) {
		return nil
	} else if err != nil {
		return err
	}
	return b.c.Deliver(ctx, b.tx, b.run.TenantID, id, engine.Cancel{RequestID: "parent:" + b.run.ID.String(), Reason: "parent cancelled"})
}
