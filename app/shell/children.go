package shell

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
	b.c.obs.RunStarted(ctx, child)
	return b.c.enqueueTick(ctx, b.tx, b.run.TenantID, id)
}

func (b *commandBatch) childVersion(ctx context.Context, cmd engine.StartChildRun) (store.DefinitionVersion, error) {
	return b.c.Version(ctx, b.s, b.run.TenantID, cmd.Workflow, cmd.Version)
}

func (b *commandBatch) childFailed(ctx context.Context, node, code, msg string) error {
	return b.c.Deliver(ctx, b.tx, b.run.TenantID, b.run.ID, engine.ChildRunUpdate{
		Node: node, Status: engine.RunFailed, Error: &engine.Error{Code: code, Message: msg}, NotStarted: true,
	})
}

// notifyParent tells a sync parent that its child ended, reached a
// checkpoint or continued as new (then the parent waits for the
// successor). A child that could not continue, for want of a published
// version, is reported terminated instead.
func (b *commandBatch) notifyParent(ctx context.Context, cmd engine.NotifyParent) error {
	parent, err := uuid.Parse(cmd.Parent.RunID)
	if err != nil {
		return fmt.Errorf("parent run id %q: %w", cmd.Parent.RunID, err)
	}
	u := engine.ChildRunUpdate{
		Node: cmd.Parent.Node, Status: cmd.Status, Checkpoint: cmd.Checkpoint, Output: cmd.Output, Error: cmd.Error,
		ChildRunID: b.run.ID.String(), Successor: cmd.Successor,
	}
	if cmd.Successor != "" && b.cannotContinue {
		u.Successor = ""
		u.Error = &engine.Error{Code: string(engine.ReasonTransitionLimit), Message: "could not continue as new: the definition has no Published version"}
	}
	return b.c.Deliver(ctx, b.tx, b.run.TenantID, parent, u)
}

// maxChainFollow bounds how far cancelChild follows a ContinueAsNew
// chain past the run the parent last heard of.
const maxChainFollow = 1000

// cancelChild cancels a sync child run, if it was created, saying why.
// A child that continued as new is followed to its latest successor:
// each run is locked before it is read, so a successor created meanwhile
// is found rather than left running.
func (b *commandBatch) cancelChild(ctx context.Context, cmd engine.CancelChildRun) error {
	id, err := waitedChildID(cmd)
	if err != nil {
		return err
	}
	for range maxChainFollow {
		if err := b.s.RunLock(ctx, b.run.TenantID, id); apperr.Is(err, apperr.NotFound) {
			return nil
		} else if err != nil {
			return err
		}
		child, err := b.s.RunGet(ctx, b.run.TenantID, id)
		if err != nil {
			return err
		}
		if child.Status.Terminal() && child.Reason == string(engine.ReasonContinuedAsNew) && child.ContinuedToRunID != nil {
			id = *child.ContinuedToRunID
			continue
		}
		break
	}
	reason := cmd.Reason
	if reason == "" {
		reason = "parent cancelled"
	}
	return b.c.Deliver(ctx, b.tx, b.run.TenantID, id, engine.Cancel{RequestID: "parent:" + b.run.ID.String(), Reason: reason})
}

func waitedChildID(cmd engine.CancelChildRun) (uuid.UUID, error) {
	if cmd.RunID == "" {
		return uuid.MustParse(engine.ChildRunID(cmd.Key)), nil
	}
	id, err := uuid.Parse(cmd.RunID)
	if err != nil {
		return uuid.Nil, fmt.Errorf("child run id %q: %w", cmd.RunID, err)
	}
	return id, nil
}
