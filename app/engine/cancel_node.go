package engine

import (
	"github.com/ductor/ductor/app/definition"
)

// cancelNode applies an operator's CancelNode: a running or waiting node
// has its work withdrawn (the attempt, timer, approval or case, a sync
// child run, a scatter's live children) and ends cancelled with error
// code cancelled. From there it is a failure like any other: on_error
// continue fires its error and done edges, fail ends the run failed; a
// scatter child counts as a failed child.
func (d *decider) cancelNode(c CancelNode) {
	n := d.get(c.Node)
	switch {
	case n == nil || (n.Child == nil && d.g.steps[c.Node] == nil):
		d.discard(c, "unknown node")
		return
	case n.State != NodeRunning && n.State != NodeWaiting:
		d.discard(c, "node is "+string(n.State))
		return
	}
	n = d.mut(c.Node)
	reason := "cancelled by an operator"
	if c.Reason != "" {
		reason += ": " + c.Reason
	}
	err := &Error{Code: CodeCancelled, Message: reason}
	d.withdraw(n, "node "+n.ID+" "+reason)
	if n.State == NodeRunning && n.Scatter == nil {
		d.recordAttempt(n, nil, err) // the attempt a worker was running
	}
	n.Waiting, n.Outcome, n.Error, n.CancelReason = nil, definition.OutcomeError, err, reason
	d.setNode(n, NodeCancelled, reason)
	if n.Scatter != nil {
		d.stopChildren(n, "scatter "+n.ID+" cancelled ("+reason+")")
	}
	if n.Child != nil || d.g.steps[n.Ref].OnError == definition.OnErrorContinue {
		d.after(n, -1)
		return
	}
	d.finished(n)
	d.failRun(n)
}
