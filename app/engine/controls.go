package engine

import (
	"fmt"
	"time"

	"github.com/ductor/ductor/app/definition"
)

// failRun fails the run because n failed under on_error: fail. Running
// and waiting nodes are cancelled, pending and ready ones skipped.
func (d *decider) failRun(n *Node) {
	d.runRow.Error = &Error{Code: n.Error.Code, Message: n.Error.Message, Node: n.ID}
	d.setRun(RunFailed, "node "+n.ID+" failed")
	d.stopNodes(NodeSkipped)
}

func (d *decider) cancelRun(c Cancel) {
	d.runRow.CancelReason, d.runRow.CancelledBy = c.Reason, c.By
	detail := c.Reason
	if c.By != "" {
		detail = "by " + c.By
		if c.Reason != "" {
			detail += ": " + c.Reason
		}
	}
	d.setRun(RunCancelled, detail)
	d.stopNodes(NodeCancelled)
}

func (d *decider) timeoutRun() {
	if d.runRow.Deadline.IsZero() || d.now.Before(d.runRow.Deadline) {
		d.discard(TimerFired{TimerID: runTimeoutTimer}, "stale run timeout")
		return
	}
	d.runRow.Error = &Error{Code: CodeTimeout, Message: "run timed out"}
	d.setRun(RunTimedOut, "run timeout")
	d.stopNodes(NodeCancelled)
}

func (d *decider) terminate(reason TerminateReason) {
	d.runRow.Reason = reason
	d.setRun(RunTerminated, string(reason))
	d.stopNodes(NodeCancelled)
}

// stopNodes ends every non-terminal node of a run that just ended:
// running and waiting ones are cancelled (with their side effects
// withdrawn), pending and ready ones move to idle.
func (d *decider) stopNodes(idle NodeState) { d.stopNodesFor(idle, "") }

// stopNodesFor is stopNodes saying why (reason, recorded on the nodes).
func (d *decider) stopNodesFor(idle NodeState, reason string) {
	d.queue = nil
	for _, ref := range d.g.order() {
		if n := d.get(ref); n != nil && !n.State.Terminal() {
			d.stopNode(d.mut(ref), idle, reason)
		}
	}
}

func (d *decider) stopNode(n *Node, idle NodeState, reason string) {
	if idle == NodeCancelled || (n.State != NodePending && n.State != NodeReady) {
		n.CancelReason = reason
	}
	switch n.State {
	case NodePending, NodeReady:
		d.setNode(n, idle, orText(reason, "run ended"))
		return
	}
	d.withdraw(n, reason)
	n.Waiting = nil
	d.setNode(n, NodeCancelled, reason)
	if n.Scatter != nil {
		d.stopChildren(n, reason)
	}
}

// parentEnded is the cancel reason of a child run whose parent run
// ended: "parent cancelled" only when it was cancelled.
func (d *decider) parentEnded() string {
	switch st := d.runRow.Status; st {
	case RunCancelled:
		return "parent cancelled"
	case RunTimedOut:
		return "parent timed out"
	case RunTerminated:
		return "parent terminated (" + string(d.runRow.Reason) + ")"
	default:
		return "parent " + string(st)
	}
}

func orText(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// withdraw emits the commands that undo a running or waiting node's
// pending side effects. Async and detached children are left alone; a
// sync child run is cancelled saying why (reason, or how the parent run
// ended when there is none).
func (d *decider) withdraw(n *Node, reason string) {
	if n.State == NodeRunning && stepKinds[d.specOf(n).typ] == kindWorker && n.Scatter == nil {
		if !d.retract(func(c Command) bool {
			x, ok := c.(DispatchAttempt)
			return ok && x.Node == n.ID && x.Generation == n.Generation && x.Attempt == n.Attempt
		}) {
			d.emit(CancelAttempt{Node: n.ID, Generation: n.Generation, Attempt: n.Attempt})
		}
	}
	w := n.Waiting
	if w == nil {
		return
	}
	d.cancelNodeTimer(n)
	switch w.Type {
	case WaitApproval, WaitInteraction:
		d.emit(CloseInteraction{Node: n.ID, Key: d.idempotencyKey(n)})
	case WaitChild:
		if w.ChildKey != "" {
			d.emit(CancelChildRun{Node: n.ID, Key: w.ChildKey, RunID: w.ChildRunID, Reason: orText(reason, d.parentEnded())})
		}
	}
}

// continueAsNew records the intent; settle closes the run once pending
// inputs are drained (bounded).
func (d *decider) continueAsNew(c ContinueAsNew) {
	if d.runRow.PendingCAN != nil {
		d.discard(c, "continue-as-new already pending")
		return
	}
	d.runRow.PendingCAN = &c
}

func (d *decider) closeForCAN() {
	c := d.runRow.PendingCAN
	d.runRow.PendingCAN, d.runRow.CANDeferrals = nil, 0
	input := c.Input
	if input == nil {
		input = d.runRow.Input
	}
	d.terminate(ReasonContinuedAsNew)
	d.emit(StartSuccessor{RequestID: c.RequestID, Input: input})
	if p := d.runRow.Parent; p != nil && p.Sync {
		// The successor inherits the parent link: the parent waits for
		// it from now on, and it reports when it ends.
		d.emit(NotifyParent{Parent: *p, Status: RunTerminated, Successor: SuccessorRunID(d.runRow.ID, c.RequestID)})
	}
}

// retryNode re-runs a failed or cancelled node and everything downstream
// of it (plus, in an ended run, the node whose failure ended it and every
// node the ending cancelled or skipped), keeping upstream outputs. Re-run nodes start a new
// generation, so their idempotency keys change and late results of the
// old generation are stale.
func (d *decider) retryNode(r RetryNode) {
	t := d.get(r.Node)
	if t != nil && t.Child != nil {
		d.retryChild(r, t)
		return
	}
	switch {
	case t == nil || d.g.steps[r.Node] == nil:
		d.discard(r, "unknown node")
		return
	case t.State != NodeFailed && t.State != NodeCancelled:
		d.discard(r, "node is "+string(t.State))
		return
	case d.runRow.Status == RunSucceeded || d.runRow.Status == RunTerminated || d.runRow.Status == RunTimedOut:
		d.discard(r, "run is "+string(d.runRow.Status))
		return
	}
	reset := d.resetSet(r.Node)
	for _, ref := range d.g.order() {
		if reset[ref] {
			d.resetNode(d.mut(ref), reset, r.Node)
		}
	}
	d.resumeRun("retry from " + r.Node)
	for _, ref := range d.g.order() {
		if reset[ref] {
			d.consider(ref)
		}
	}
}

func (d *decider) resetSet(target string) map[string]bool {
	reset := d.g.descendants(target)
	reset[target] = true
	if !d.runRow.Status.Terminal() {
		return reset
	}
	for _, ref := range d.g.order() {
		if n := d.get(ref); n.State == NodeCancelled || n.State == NodeSkipped || d.failedRun(n) {
			reset[ref] = true
			for k := range d.g.descendants(ref) {
				reset[k] = true
			}
		}
	}
	return reset
}

// failedRun reports whether n is the fail-policy failure that ended the
// run: it never resolved its edges, so resuming must re-run it.
func (d *decider) failedRun(n *Node) bool {
	return n.State == NodeFailed && d.g.steps[n.Ref].OnError != definition.OnErrorContinue
}

func (d *decider) resetNode(n *Node, reset map[string]bool, target string) {
	if !n.State.Terminal() && n.State != NodePending {
		d.withdraw(n, "retry from "+target)
		n.Waiting = nil
		d.setNode(n, NodeCancelled, "retry from "+target)
	}
	for _, e := range d.g.in[n.Ref] {
		if reset[e.From] {
			delete(n.Inbound, EdgeID(e))
		}
	}
	n.Outcome, n.Output, n.Error, n.Waiting, n.Scatter, n.CancelReason = "", nil, nil, nil, nil, ""
	n.Attempt, n.FinishedAt = 0, time.Time{}
	n.Generation++
	if d.steps != nil {
		delete(d.steps, n.ID)
	}
	if n.State != NodePending {
		d.setNode(n, NodePending, "retry from "+target)
	}
}

// settle ends the tick: closes a pending ContinueAsNew, applies the
// transition tiers, completes the run when every node is terminal and
// otherwise sets running or waiting.
func (d *decider) settle() {
	if !d.runRow.Status.Terminal() && d.runRow.PendingCAN != nil {
		if d.tick.MorePending && d.runRow.CANDeferrals < d.maxCANDeferrals() {
			d.runRow.CANDeferrals++
		} else {
			d.closeForCAN()
		}
	}
	if !d.runRow.Status.Terminal() {
		d.progress()
	}
	d.softWarning()
	if !d.runRow.Status.Terminal() {
		d.limits()
	}
	d.sweep()
	d.notifyParent()
}

func (d *decider) maxCANDeferrals() int {
	if d.e.MaxCANDeferrals > 0 {
		return d.e.MaxCANDeferrals
	}
	return DefaultMaxCANDeferrals
}

// progress completes the run or sets running/waiting.
func (d *decider) progress() {
	active, waiting, open := false, false, false
	for _, ref := range d.g.order() {
		switch d.get(ref).State {
		case NodeReady, NodeRunning:
			active, open = true, true
		case NodeWaiting:
			waiting, open = true, true
		case NodePending:
			open = true
		}
	}
	switch {
	case !open:
		d.completeRun()
	case !active && waiting && d.runRow.Status != RunWaiting:
		d.setRun(RunWaiting, "")
	case (active || !waiting) && d.runRow.Status == RunWaiting:
		d.setRun(RunRunning, "")
	}
}

// completeRun succeeds the run: every node ended without a fail-policy
// failure. Its output is output_expr, or the map of sink outputs by ref;
// an output over the cap or that cannot be stored fails the run.
func (d *decider) completeRun() {
	var out any
	if src := d.g.m.OutputExpr; src != "" {
		v, err := d.evalWith(src, nil)
		if err != nil {
			d.failOutput(exprError("output_expr", err))
			return
		}
		out = v
	} else {
		out = d.sinkOutputs()
	}
	checked, err := d.checkOutput(out)
	if err != nil {
		err.Message = "run " + err.Message
		d.failOutput(err)
		return
	}
	d.runRow.Output = checked
	d.setRun(RunSucceeded, "")
}

// sinkOutputs is the default run output: the succeeded sinks' outputs by
// ref.
func (d *decider) sinkOutputs() map[string]any {
	out := map[string]any{}
	for _, ref := range d.g.sinks {
		if n := d.get(ref); n.State == NodeSucceeded {
			out[ref] = n.Output
		}
	}
	return out
}

func (d *decider) failOutput(err *Error) {
	d.runRow.Error = err
	d.setRun(RunFailed, "output failed: "+err.Code)
}

// limits applies the transition tiers: hard synthesizes a ContinueAsNew,
// terminate force-stops the run. (Soft only warns: softWarning.)
func (d *decider) limits() {
	l, c := d.g.m.Limits, d.runRow.TransitionCount
	switch {
	case l.TransitionsTerminate > 0 && c >= int64(l.TransitionsTerminate):
		d.terminate(ReasonTransitionLimit)
	case l.TransitionsHard > 0 && c >= int64(l.TransitionsHard):
		d.runRow.PendingCAN = &ContinueAsNew{RequestID: "transition_limit"}
		d.closeForCAN()
	}
}

// softWarning records, once, that the run passed its soft transition
// limit: a warning in its history and a Warn command. It applies whatever
// else the tick did, also when the tick crossed the hard limit too or
// ended the run; only a run that had ended before the tick is left alone.
func (d *decider) softWarning() {
	soft := d.g.m.Limits.TransitionsSoft
	if soft <= 0 || d.runRow.SoftWarned || d.st.Run.Status.Terminal() || d.runRow.TransitionCount < int64(soft) {
		return
	}
	d.runRow.SoftWarned = true
	msg := fmt.Sprintf("run passed its soft transition limit of %d", soft)
	st := string(d.runRow.Status)
	d.transition(Transition{From: st, To: st, Detail: "warning transitions_soft: " + msg})
	d.emit(Warn{Code: "transitions_soft", Message: msg})
}

// notifyParent tells a sync parent that its child ended.
func (d *decider) notifyParent() {
	p := d.runRow.Parent
	if p == nil || !p.Sync || !d.runRow.Status.Terminal() || d.st.Run.Status.Terminal() {
		return
	}
	if d.runRow.Reason == ReasonContinuedAsNew {
		return // the successor inherits the parent link and reports instead
	}
	d.emit(NotifyParent{Parent: *p, Status: d.runRow.Status, Output: d.runRow.Output, Error: d.runRow.Error})
}
