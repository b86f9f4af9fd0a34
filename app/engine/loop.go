package engine

import (
	"fmt"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

// Structured loops: a sync subworkflow with repeat runs its child run
// again and again, one child run per iteration (so each run's history
// stays bounded), until repeat.until_expr holds or max_iterations ran.
// The node waits through every iteration; its output is the last
// iteration's.

// iterationKey names iteration i's child run of the node keyed key.
func iterationKey(key string, i int) string { return fmt.Sprintf("%s:i%d", key, i) }

// iterate ends an iteration that succeeded with output: the loop ends
// when until_expr holds, fails at max_iterations, and otherwise starts
// the next iteration with repeat.input_expr (default: with.input_expr,
// or the first iteration's input).
func (d *decider) iterate(n *Node, output any) {
	w := d.specOf(n).with
	rep := w.sub("repeat")
	k := n.Waiting.Iteration
	loop := &expr.Loop{Output: output, Iteration: k}
	done, err := d.evalBool(rep.str("until_expr"), func(v *expr.Vars) { v.Loop = loop })
	switch {
	case err != nil:
		d.cancelNodeTimer(n)
		d.fail(n, exprError("with.repeat.until_expr", err))
		return
	case done:
		d.cancelNodeTimer(n)
		d.succeed(n, definition.OutcomeSuccess, output)
		return
	case int64(k) >= rep.num("max_iterations"):
		d.cancelNodeTimer(n)
		d.fail(n, &Error{Code: CodeMaxIterations, Message: fmt.Sprintf("until_expr still false after %d iterations (max_iterations)", k)})
		return
	}
	src, field := rep.str("input_expr"), "with.repeat.input_expr"
	if src == "" {
		src, field = w.str("input_expr"), "with.input_expr"
	}
	input, ierr := d.childInput(n, src, field, loop)
	if ierr != nil {
		d.cancelNodeTimer(n)
		d.fail(n, ierr)
		return
	}
	key := iterationKey(d.idempotencyKey(n), k+1)
	d.startChild(n, w, key, input)
	n.Waiting.ChildKey, n.Waiting.ChildRunID, n.Waiting.Iteration = key, ChildRunID(key), k+1
	d.setNode(n, NodeWaiting, fmt.Sprintf("iteration %d", k+1))
}

// staleChild reports a report from another child run than the one the
// node waits for: an earlier iteration's, or an earlier run of a chain
// that continued as new.
func staleChild(w *Waiting, u ChildRunUpdate) bool {
	want := waitedChild(w)
	return u.ChildRunID != "" && want != "" && u.ChildRunID != want
}

// waitedChild is the id of the child run a node waits for: the latest
// successor it heard of, else the run its key names.
func waitedChild(w *Waiting) string {
	if w.ChildRunID != "" || w.ChildKey == "" {
		return w.ChildRunID
	}
	return ChildRunID(w.ChildKey)
}
