package engine

import (
	"fmt"

	"github.com/ductor/ductor/app/expr"
)

// Early completion: a scatter's complete_when, a CEL bool over its
// children's progress, is evaluated each time children have finished
// since it last was. Once it holds the scatter dispatches no more
// children, cancels those not finished and completes with the outcomes
// of the finished ones.

// checkComplete evaluates complete_when if children finished since the
// last evaluation. It reports whether the scatter may go on (dispatch or
// complete): false while the children complete_when reads (results) are
// being loaded, or when it failed the scatter.
func (d *decider) checkComplete(n *Node) bool {
	s := n.Scatter
	src := with(d.g.steps[n.Ref].With).str("complete_when")
	done := s.Succeeded + s.Failed
	if src == "" || s.CompletedEarly || done == s.Checked || done == s.Total {
		return true
	}
	p := &expr.Progress{Succeeded: s.Succeeded, Failed: s.Failed, Done: done, Total: s.Total}
	if d.readsResults(src) {
		if !d.allChildrenLoaded(n) {
			d.need(Need{Scatter: n.ID, From: 0, To: s.Total})
			return false
		}
		p.Results = d.finishedOutcomes(n)
	}
	s.Checked = done
	holds, err := d.evalBool(src, func(v *expr.Vars) { v.Progress = p })
	if err != nil {
		d.failScatter(n, exprError("with.complete_when", err))
		return false
	}
	if holds {
		s.CompletedEarly = true
		d.noteNode(n, fmt.Sprintf("complete_when held with %d of %d children finished (%d succeeded, %d failed)", done, s.Total, s.Succeeded, s.Failed))
	}
	return true
}

// readsResults reports whether complete_when reads results, which needs
// every child loaded; an evaluator that cannot tell is assumed to.
func (d *decider) readsResults(src string) bool {
	u, ok := d.e.Eval.(interface {
		Uses(src string, kind expr.Kind, names ...string) []string
	})
	return !ok || len(u.Uses(src, expr.KindBool, expr.VarResults)) > 0
}

func (d *decider) allChildrenLoaded(n *Node) bool {
	return len(d.children[n.ID]) >= n.Scatter.Total
}

// finishedOutcomes lists the counted children's outcomes in item order.
func (d *decider) finishedOutcomes(n *Node) []any {
	out := []any{}
	for _, cid := range d.childIDs(n.ID) {
		if c := d.get(cid); counted(c) {
			out = append(out, childOutcome(c))
		}
	}
	return out
}

// cancelUnfinished cancels the children an early completion leaves
// unfinished (every child is loaded by then).
func (d *decider) cancelUnfinished(n *Node) {
	reason := "scatter " + n.ID + " completed early (complete_when)"
	for _, cid := range d.childIDs(n.ID) {
		if c := d.get(cid); !c.State.Terminal() {
			d.stopNode(d.mut(cid), NodeCancelled, reason)
			n.Scatter.Cancelled++
		}
	}
	n.Scatter.InFlight = 0
}

// failScatter fails a running scatter, cancelling its live children.
func (d *decider) failScatter(n *Node, err *Error) {
	d.recordAttempt(n, nil, err)
	d.stopChildren(n, "scatter "+n.ID+" failed ("+err.Code+")")
	d.fail(n, err)
}
