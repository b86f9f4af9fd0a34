package engine

import (
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

type stepKind int

const (
	kindPure    stepKind = iota + 1 // evaluated inside the tick
	kindWorker                      // dispatched to a step worker
	kindParking                     // parks the node until an input wakes it
	kindScatter
)

var stepKinds = map[definition.StepType]stepKind{
	definition.TypeTransform:   kindPure,
	definition.TypeCondition:   kindPure,
	definition.TypeCheckpoint:  kindPure,
	definition.TypeGather:      kindPure,
	definition.TypeTask:        kindWorker,
	definition.TypeHTTP:        kindWorker,
	definition.TypeScatter:     kindScatter,
	definition.TypeSubworkflow: kindParking,
	definition.TypeWait:        kindParking,
	definition.TypeSignal:      kindParking,
	definition.TypeEvent:       kindParking,
	definition.TypeEventSet:    kindParking,
	definition.TypeDigest:      kindParking,
	definition.TypeApproval:    kindParking,
	definition.TypeHumanLoop:   kindParking,
}

// spec is what a node executes: its manifest step, or for a scatter child
// the scatter's template.
type spec struct {
	typ     definition.StepType
	with    with
	policy  definition.RetryPolicy
	timeout int64
	// flow is the step's (or template's) concurrency pool.
	flow *definition.StepConcurrency
}

func (d *decider) specOf(n *Node) spec {
	s := d.g.steps[n.Ref]
	if n.Child == nil || s.ForEach != "" {
		return spec{typ: s.Type, with: s.With, policy: retryPolicy(s), timeout: s.TimeoutMS, flow: s.Concurrency}
	}
	w := with(s.With)
	if w.str("mode") == "child_workflow" {
		cw := with{"workflow": w["workflow"], "version": w["version"], "mode": "sync"}
		if src := w.str("input_expr"); src != "" {
			cw["input_expr"] = src
		}
		return spec{typ: definition.TypeSubworkflow, with: cw, policy: definition.RetryPolicy{MaxAttempts: 1}}
	}
	do := w.sub("do")
	t := definition.StepType(do.str("type"))
	return spec{typ: t, with: do.sub("with"), policy: templatePolicy(t, do), timeout: do.num("timeout_ms"), flow: templateFlow(do.sub("concurrency"))}
}

// vars adds a scatter child's item, index and key to the variables.
func vars(n *Node) func(*expr.Vars) {
	if n.Child == nil {
		return nil
	}
	c := n.Child
	return func(v *expr.Vars) { v.Item, v.Index, v.Key = c.Item, c.Index, c.Key }
}

func (d *decider) evalWith(src string, extra func(*expr.Vars)) (any, error) {
	return d.eval(src, expr.KindAny, extra)
}

// startNode runs a ready node: run_if, then by kind.
func (d *decider) startNode(n *Node) {
	step := d.g.steps[n.Ref]
	if n.Child == nil && step.RunIf != "" {
		ok, err := d.evalBool(step.RunIf, nil)
		if err != nil {
			d.begin(n)
			d.fail(n, exprError("run_if", err))
			return
		}
		if !ok {
			d.skip(n, "run_if false")
			return
		}
	}
	if n.Child == nil && (step.ForEach != "" || step.Type == definition.TypeScatter) {
		d.startScatter(n)
		return
	}
	d.execute(n, d.now)
}

// begin moves a node to running with a new attempt.
func (d *decider) begin(n *Node) {
	n.Attempt++
	d.setNode(n, NodeRunning, "")
}

// execute starts one node by its spec; runAt delays worker dispatches.
func (d *decider) execute(n *Node, runAt time.Time) {
	sp := d.specOf(n)
	d.begin(n)
	switch stepKinds[sp.typ] {
	case kindPure:
		d.evalPure(n, sp)
	case kindWorker:
		d.dispatch(n, sp, runAt)
	case kindParking:
		d.park(n, sp)
	default:
		d.fail(n, &Error{Code: CodeInvalidStep, Message: "unsupported step type " + string(sp.typ)})
	}
}

func (d *decider) dispatch(n *Node, sp spec, runAt time.Time) {
	params, perr := d.params(sp.with, vars(n))
	if perr != nil {
		d.fail(n, perr)
		return
	}
	if _, ok := params["input"]; !ok && sp.typ == definition.TypeTask {
		params["input"] = d.runRow.Input
		if n.Child != nil {
			params["input"] = n.Child.Item
		}
	}
	key, limit, ferr := d.flowKey(sp.flow, vars(n))
	if ferr != nil {
		d.fail(n, ferr)
		return
	}
	d.emit(DispatchAttempt{
		Node: n.ID, Ref: n.Ref, Type: string(sp.typ), Generation: n.Generation, Attempt: n.Attempt,
		RunAt: runAt, IdempotencyKey: d.idempotencyKey(n), Params: params, TimeoutMS: sp.timeout,
		FlowKey: key, FlowLimit: limit,
	})
}

// evalPure evaluates transform, condition, checkpoint and gather inside
// the tick.
func (d *decider) evalPure(n *Node, sp spec) {
	var out any
	var err *Error
	outcome := definition.OutcomeSuccess
	switch sp.typ {
	case definition.TypeTransform:
		out, err = d.pureExpr(sp.with.str("expr"), "with.expr", n)
	case definition.TypeCondition:
		var ok bool
		ok, err = d.pureBool(sp.with.str("expr"), n)
		out, outcome = ok, map[bool]definition.Outcome{true: definition.OutcomeTrue, false: definition.OutcomeFalse}[ok]
	case definition.TypeCheckpoint:
		out, err = d.checkpoint(n, sp)
	case definition.TypeGather:
		out, err = d.gather(sp)
	}
	if err == nil {
		out, err = d.checkOutput(out)
	}
	d.recordAttempt(n, out, err)
	if err != nil {
		d.fail(n, err)
		return
	}
	d.route(n, outcome, out)
}

func (d *decider) pureExpr(src, field string, n *Node) (any, *Error) {
	v, err := d.evalWith(src, vars(n))
	if err != nil {
		return nil, exprError(field, err)
	}
	return v, nil
}

func (d *decider) pureBool(src string, n *Node) (bool, *Error) {
	v, err := d.eval(src, expr.KindBool, vars(n))
	if err != nil {
		return false, exprError("with.expr", err)
	}
	b, ok := v.(bool)
	if !ok {
		return false, &Error{Code: CodeExpressionError, Message: "with.expr: condition is not a bool"}
	}
	return b, nil
}

// checkpoint passes its input through (or evaluates output_expr) and
// tells a waiting parent run.
func (d *decider) checkpoint(n *Node, sp spec) (any, *Error) {
	out := d.nodeInput(n)
	if src := sp.with.str("output_expr"); src != "" {
		v, err := d.pureExpr(src, "with.output_expr", n)
		if err != nil {
			return nil, err
		}
		out = v
	}
	out, err := d.checkOutput(out)
	if err != nil {
		return nil, err
	}
	if p := d.runRow.Parent; p != nil && p.Sync {
		d.emit(NotifyParent{Parent: *p, Status: d.runRow.Status, Checkpoint: sp.with.str("name"), Output: out})
	}
	return out, nil
}

// nodeInput is what flowed into a node: the output of its one fired
// predecessor, a map of them by ref when several fired, the run input at
// an entrypoint.
func (d *decider) nodeInput(n *Node) any {
	var refs []string
	for _, e := range d.g.in[n.Ref] {
		if n.Inbound[EdgeID(e)] == EdgeFired {
			refs = append(refs, e.From)
		}
	}
	switch len(refs) {
	case 0:
		return d.runRow.Input
	case 1:
		return d.get(refs[0]).Output
	}
	m := map[string]any{}
	for _, r := range refs {
		m[r] = d.get(r).Output
	}
	return m
}
