package engine

import (
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

// start moves a pending run to running: it creates one pending node per
// manifest step, arms the run timeout and readies the entrypoints.
func (d *decider) start() {
	d.runRow.StartedAt = d.now
	d.setRun(RunRunning, "started")
	if ms := d.g.m.TimeoutMS; ms > 0 {
		d.runRow.Deadline = d.now.Add(msDuration(ms))
		d.emit(ScheduleTimer{TimerID: runTimeoutTimer, FireAt: d.runRow.Deadline})
	}
	for _, ref := range d.g.order() {
		if d.st.Nodes[ref] == nil {
			d.insert(&Node{ID: ref, Ref: ref, State: NodePending})
		}
	}
	for _, ref := range d.g.order() {
		d.consider(ref)
	}
}

// drain starts every node that became ready, in order. Pure steps finish
// inside start and may ready more nodes, so a chain of transforms runs to
// its end in one call.
func (d *decider) drain() {
	for len(d.queue) > 0 && !d.runRow.Status.Terminal() {
		id := d.queue[0]
		d.queue = d.queue[1:]
		if n := d.get(id); n != nil && n.State == NodeReady {
			d.startNode(d.mut(id))
		}
	}
	d.queue = nil
}

func (d *decider) ready(n *Node) {
	d.setNode(n, NodeReady, "")
	d.queue = append(d.queue, n.ID)
}

// mark resolves one edge and lets its target react.
func (d *decider) mark(e definition.Edge, m EdgeMark) {
	t := d.get(e.To)
	if t == nil {
		return
	}
	t = d.mut(e.To)
	if t.Inbound == nil {
		t.Inbound = map[string]EdgeMark{}
	}
	t.Inbound[EdgeID(e)] = m
	d.consider(e.To)
}

// resolve fires or kills every outgoing edge of a terminal manifest node:
// outcome edges first, then done. chosen is the choice branch taken (-1
// for none).
func (d *decider) resolve(n *Node, chosen int) {
	edges := d.g.out[n.Ref]
	ran := ranToEnd(n)
	for _, e := range edges {
		var fire bool
		switch {
		case e.On == definition.OutcomeDone:
			fire = ran
		case e.Choice != nil:
			fire = ran && n.Outcome == definition.OutcomeSuccess && e.Choice.Index == chosen
		default:
			fire = ran && outcomeOf(e) == n.Outcome
		}
		d.mark(e, map[bool]EdgeMark{true: EdgeFired, false: EdgeDead}[fire])
	}
}

func outcomeOf(e definition.Edge) definition.Outcome {
	if e.On == "" {
		return definition.OutcomeSuccess
	}
	return e.On
}

// choose evaluates a choice group in order: the first true `when` wins,
// else the default. The conditions see their source as it is about to
// end (steps.REF.output is the output it succeeded with).
func (d *decider) choose(ref string, outcome definition.Outcome, output any) (int, error) {
	source := func(v *expr.Vars) {
		steps := make(map[string]any, len(v.Steps)+1)
		for k, s := range v.Steps {
			steps[k] = s
		}
		steps[ref] = stepVar(&Node{ID: ref, State: NodeSucceeded, Outcome: outcome, Output: output})
		v.Steps = steps
	}
	def := -1
	for _, e := range d.g.out[ref] {
		if e.Choice == nil {
			continue
		}
		if e.Choice.Default {
			def = e.Choice.Index
			continue
		}
		ok, err := d.evalBool(e.Choice.When, source)
		if err != nil {
			return -1, err
		}
		if ok {
			return e.Choice.Index, nil
		}
	}
	return def, nil
}

// succeed ends a node with a success-side outcome and routes it. An
// output over the cap, or one that cannot be stored, fails the node
// instead (payload_too_large, invalid_output).
func (d *decider) succeed(n *Node, outcome definition.Outcome, output any) {
	out, err := d.checkOutput(output)
	if err != nil {
		d.fail(n, err)
		return
	}
	d.route(n, outcome, out)
}

// route ends a node with a success-side outcome and an output already
// checked, and fires its edges.
func (d *decider) route(n *Node, outcome definition.Outcome, output any) {
	chosen := -1
	if n.Child == nil && outcome == definition.OutcomeSuccess && d.g.hasChoice(n.Ref) {
		c, err := d.choose(n.Ref, outcome, output)
		if err != nil {
			d.fail(n, exprError("choice", err))
			return
		}
		chosen = c
	}
	n.Outcome, n.Output, n.Error, n.Waiting = outcome, output, nil, nil
	d.setNode(n, NodeSucceeded, string(outcome))
	if n.Child == nil && d.g.steps[n.Ref].EndRun != "" {
		d.endRun(n)
		return
	}
	d.after(n, chosen)
}

// fail ends a node as failed (retries exhausted or not applicable),
// applying its on_error policy.
func (d *decider) fail(n *Node, err *Error) {
	cont := n.Child != nil || d.g.steps[n.Ref].OnError == definition.OnErrorContinue
	d.failPolicy(n, err, cont)
}

// failContinue fails a node as if its policy were continue
// (subworkflow on_timeout: continue_with_error).
func (d *decider) failContinue(n *Node, err *Error) { d.failPolicy(n, err, true) }

func (d *decider) failPolicy(n *Node, err *Error, cont bool) {
	n.Outcome, n.Error, n.Waiting = definition.OutcomeError, err, nil
	d.setNode(n, NodeFailed, err.Code)
	if cont {
		d.after(n, -1)
		return
	}
	d.finished(n)
	d.failRun(n)
}

// skip ends a non-terminal node as skipped; its edges all die.
func (d *decider) skip(n *Node, detail string) {
	n.Waiting = nil
	d.setNode(n, NodeSkipped, detail)
	d.after(n, -1)
}

// after routes a terminal node: scatter children report to their
// scatter, manifest nodes resolve their edges.
func (d *decider) after(n *Node, chosen int) {
	if n.Child != nil {
		d.childDone(n)
		return
	}
	d.finished(n)
	d.resolve(n, chosen)
}
