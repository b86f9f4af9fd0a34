package engine

import (
	"fmt"

	"github.com/ductor/ductor/app/definition"
)

// endRun ends the run because n, a step with end_run, succeeded: the run
// takes that status, its output is output_expr (default: the outputs of
// the succeeded sinks and of n, by ref), and everything still running or
// waiting is cancelled, everything pending skipped.
func (d *decider) endRun(n *Node) {
	d.finished(n)
	end := d.g.steps[n.Ref].EndRun
	reason := fmt.Sprintf("step %s ended the run (end_run: %s)", n.ID, end)
	out, err := d.endOutput(n)
	var bad *Error
	if err == nil {
		out, bad = d.checkOutput(out)
	}
	switch {
	case err != nil:
		d.runRow.Error = exprError("output_expr", err)
		d.setRun(RunFailed, "output_expr failed")
	case bad != nil:
		bad.Message = "run " + bad.Message
		d.failOutput(bad)
	case end == definition.EndFailed:
		d.runRow.Output = out
		d.runRow.Error = &Error{Code: CodeEndRun, Message: reason, Node: n.ID}
		d.setRun(RunFailed, reason)
	default:
		d.runRow.Output = out
		d.setRun(RunSucceeded, reason)
	}
	d.stopNodesFor(NodeSkipped, reason)
	d.resolve(n, -1) // its edges resolve as usual; nothing reacts in an ended run
	d.killOpenEdges()
}

// killOpenEdges marks dead every edge still unresolved (the cancelled
// and skipped nodes' edges), so that in an ended run every edge ended
// fired or dead.
func (d *decider) killOpenEdges() {
	for _, e := range d.g.m.Edges {
		if t := d.get(e.To); t != nil && t.Inbound[EdgeID(e)] == "" {
			t = d.mut(e.To)
			if t.Inbound == nil {
				t.Inbound = map[string]EdgeMark{}
			}
			t.Inbound[EdgeID(e)] = EdgeDead
		}
	}
}

func (d *decider) endOutput(n *Node) (any, error) {
	if src := d.g.m.OutputExpr; src != "" {
		return d.evalWith(src, nil)
	}
	out := d.sinkOutputs()
	out[n.Ref] = n.Output
	return out, nil
}
