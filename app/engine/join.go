package engine

import (
	"fmt"

	"github.com/ductor/ductor/app/definition"
)

// consider applies the join to a pending manifest node whose inbound
// edges changed: ready once the join's need of incoming edges fired
// (all of them, one, or at_least N), skipped as soon as fewer than that
// can still fire, else still pending.
func (d *decider) consider(ref string) {
	n := d.get(ref)
	if n == nil || n.State != NodePending || d.runRow.Status.Terminal() {
		return
	}
	in := d.g.in[ref]
	fired, dead := 0, 0
	for _, e := range in {
		switch n.Inbound[EdgeID(e)] {
		case EdgeFired:
			fired++
		case EdgeDead:
			dead++
		}
	}
	step := d.g.steps[ref]
	need := step.JoinNeed(len(in))
	switch {
	case fired >= need:
		n = d.mut(ref)
		d.ready(n)
		if step.JoinCancelRest && fired < len(in) {
			d.cancelRest(n, fired)
		}
	case len(in)-dead < need:
		d.skip(d.mut(ref), skipDetail(step, len(in)-dead, need))
	}
}

// skipDetail says why a join can no longer be satisfied, in the words
// of its kind.
func skipDetail(step *definition.Step, canFire, need int) string {
	switch step.Join {
	case definition.JoinAll:
		return "incoming edge dead"
	case definition.JoinAny:
		return "all incoming edges dead"
	}
	return fmt.Sprintf("only %d of the incoming edges can still fire, %d needed", canFire, need)
}

// cancelRest withdraws what a cancel_rest join no longer waits for: every
// unfinished predecessor on an edge not yet resolved, and every
// unfinished node upstream all of whose outgoing edges lead into what is
// being cancelled. They end cancelled, not failed: their edges all die
// (so the join is not fired again) and no on_error policy applies.
func (d *decider) cancelRest(j *Node, fired int) {
	rest := d.restOf(j)
	reason := fmt.Sprintf("cancel_rest: join %s fired on %d of %d incoming edges", j.ID, fired, len(d.g.in[j.Ref]))
	order := d.g.order()
	for i := len(order) - 1; i >= 0; i-- { // downstream first: an upstream loser's dead edges find them ended
		if n := d.get(order[i]); rest[order[i]] && !n.State.Terminal() {
			d.cancelLoser(d.mut(order[i]), reason)
		}
	}
}

// restOf finds the nodes cancelRest withdraws, by ref.
func (d *decider) restOf(j *Node) map[string]bool {
	rest := map[string]bool{}
	for _, e := range d.g.in[j.Ref] {
		if n := d.get(e.From); n != nil && j.Inbound[EdgeID(e)] == "" && !n.State.Terminal() {
			rest[e.From] = true
		}
	}
	order := d.g.order()
	for i := len(order) - 1; i >= 0; i-- {
		ref := order[i]
		if n := d.get(ref); n == nil || n.State.Terminal() || rest[ref] || ref == j.Ref || len(d.g.out[ref]) == 0 {
			continue
		}
		if d.feedsOnly(ref, rest) {
			rest[ref] = true
		}
	}
	return rest
}

// feedsOnly reports whether every outgoing edge of ref leads into set.
func (d *decider) feedsOnly(ref string, set map[string]bool) bool {
	for _, e := range d.g.out[ref] {
		if !set[e.To] {
			return false
		}
	}
	return true
}

// cancelLoser cancels a node that lost a race: its work is withdrawn, its
// edges die.
func (d *decider) cancelLoser(n *Node, reason string) {
	if n.State == NodeRunning || n.State == NodeWaiting {
		d.withdraw(n, "node "+n.ID+" lost a race ("+reason+")")
	}
	n.Waiting, n.Outcome, n.CancelReason = nil, "", reason
	d.setNode(n, NodeCancelled, reason)
	if n.Scatter != nil {
		d.stopChildren(n, "scatter "+n.ID+" lost a race ("+reason+")")
	}
	d.after(n, -1)
}

// ranToEnd reports whether a terminal node's outcome fires its edges: it
// succeeded or failed, or an operator cancelled it (which counts as a
// failure with code cancelled). Skipped nodes and nodes cancelled by
// their run or a race fire nothing.
func ranToEnd(n *Node) bool {
	switch n.State {
	case NodeSucceeded, NodeFailed:
		return true
	case NodeCancelled:
		return n.Outcome == definition.OutcomeError
	}
	return false
}
