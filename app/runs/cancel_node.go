package runs

import (
	"context"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// CancelNode asks a run to cancel one running or waiting node (a step,
// or a scatter child named REF[KEY]). The node ends cancelled with error
// code cancelled, and its error and done edges and on_error policy apply
// as for a failure; see engine.CancelNode. The node's state is checked
// here so that the caller hears at once about a node that has nothing to
// cancel; the tick checks it again when it drains the control.
func (c *Service) CancelNode(ctx context.Context, tenantID, runID uuid.UUID, node, reason string) error {
	run, err := store.New(c.pool).RunGet(ctx, tenantID, runID)
	if err != nil {
		return err
	}
	if run.Status.Terminal() {
		return apperr.New(apperr.Conflict, "run is %s: it has no node to cancel", run.Status)
	}
	nodes, err := store.New(c.pool).RunNodesByName(ctx, tenantID, runID, []string{node})
	if err != nil {
		return err
	}
	if len(nodes) == 0 {
		return apperr.New(apperr.NotFound, "run has no node %q", node)
	}
	if st := nodes[0].State; st != engine.NodeRunning && st != engine.NodeWaiting {
		return apperr.New(apperr.Conflict, "node %q is %s: only a running or waiting node can be cancelled", node, st)
	}
	return c.Control(ctx, tenantID, runID, engine.CancelNode{RequestID: uuid.NewString(), Node: node, Reason: reason})
}
