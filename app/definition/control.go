package definition

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ductor/ductor/app/expr"
)

// Control-flow settings beyond plain edges: partial joins, end_run, a
// scatter's complete_when and a subworkflow's repeat.

// MaxIterations bounds a repeating subworkflow.
const MaxIterations = 10_000

// RunEnd is the status an end_run step ends its run with.
type RunEnd string

const (
	EndSucceeded RunEnd = "succeeded"
	EndFailed    RunEnd = "failed"
)

// AtLeast is a partial join for [StepDef.Join]: the step is ready once N
// incoming edges fired; with CancelRest its unfinished predecessors are
// cancelled then.
type AtLeast struct {
	N          int  `json:"at_least"`
	CancelRest bool `json:"cancel_rest,omitempty"`
}

// JoinNeed is how many of a step's inEdges incoming edges must fire for
// it to be ready.
func (s *Step) JoinNeed(inEdges int) int {
	switch s.Join {
	case JoinAny:
		return min(1, inEdges)
	case JoinAtLeast:
		return min(s.JoinAtLeast, inEdges)
	}
	return inEdges
}

// joinCheck is a partial join, checked against its step's incoming
// edges once they are known.
type joinCheck struct {
	ref string
	n   int
	p   path
}

// join reads `join`: "all", "any", or {at_least: N, cancel_rest?}.
// {at_least: 1} is "any", so both hash alike.
func (c *checker) join(o object, s *Step) {
	s.Join = JoinAll
	v, ok := o.m["join"]
	if !ok {
		return
	}
	if _, isObj := v.(map[string]any); !isObj {
		s.Join = Join(o.enum("join", string(JoinAll), string(JoinAll), string(JoinAny)))
		return
	}
	jo, _ := c.object(v, o.p.dot("join"), o.step)
	jo.known("at_least", "cancel_rest")
	if !jo.has("at_least") {
		jo.problem("at_least", "is required: how many incoming edges must fire (join: all or any otherwise)")
		return
	}
	n, ok := jo.integer("at_least", 1, MaxEdges)
	if !ok {
		return
	}
	s.JoinCancelRest, _ = jo.boolean("cancel_rest")
	s.Join = JoinAny
	if n > 1 {
		s.Join, s.JoinAtLeast = JoinAtLeast, int(n)
	}
	c.joins = append(c.joins, joinCheck{ref: s.Ref, n: int(n), p: jo.p.dot("at_least")})
}

// endRun reads end_run.
func (c *checker) endRun(o object, s *Step) {
	s.EndRun = RunEnd(o.enum("end_run", "", string(EndSucceeded), string(EndFailed)))
	if s.EndRun != "" {
		c.endRuns = append(c.endRuns, s.Ref)
	}
}

// checkControl checks what needs the edges: a partial join has enough
// incoming edges, and a step that ends its run on success has no edge
// that only its success would fire.
func (c *checker) checkControl() {
	in := map[string]int{}
	for _, e := range c.m.Edges {
		in[e.To]++
	}
	for _, j := range c.joins {
		if j.n > in[j.ref] {
			c.ps.add(j.p, j.ref, "%d exceeds the %d incoming edges of step %q", j.n, in[j.ref], j.ref)
		}
	}
	for _, ref := range c.endRuns {
		c.checkEndRunEdges(ref)
	}
}

func (c *checker) checkEndRunEdges(ref string) {
	for _, e := range c.m.Edges {
		if e.From != ref || e.On == OutcomeError || e.On == OutcomeDone {
			continue
		}
		c.ps.add(c.paths[ref].dot("end_run"), ref,
			"step %q ends the run when it succeeds, so its edge to %q on %s never fires: keep only error and done edges", ref, e.To, e.On)
	}
}

// completeWhen reads a scatter's complete_when.
func completeWhen(o object, out map[string]any) {
	if s, ok := o.exprScoped("complete_when", expr.KindBool, expr.ProgressVars...); ok {
		out["complete_when"] = s
	}
}

// repeat reads a sync subworkflow's repeat: {until_expr, input_expr?,
// max_iterations}.
func (c *checker) repeat(o object, out map[string]any) {
	v, ok := o.m["repeat"]
	if !ok {
		return
	}
	ro, ok := c.object(v, o.p.dot("repeat"), o.step)
	if !ok {
		return
	}
	ro.known("until_expr", "input_expr", "max_iterations")
	if out["mode"] == "async" {
		o.problem("repeat", "applies only in sync mode: each iteration waits for the last to end")
	}
	if out["wait_for"] != "terminal" {
		o.problem("repeat", "needs wait_for: terminal: an iteration ends when its child run ends")
	}
	r := map[string]any{}
	if !ro.has("until_expr") {
		ro.problem("until_expr", "is required: the loop ends once it is true")
	}
	if s, ok := ro.exprScoped("until_expr", expr.KindBool, expr.LoopVars...); ok {
		r["until_expr"] = s
	}
	if s, ok := ro.exprScoped("input_expr", expr.KindAny, expr.LoopVars...); ok {
		r["input_expr"] = s
	}
	if !ro.has("max_iterations") {
		ro.problem("max_iterations", "is required: at most %d", MaxIterations)
	}
	r["max_iterations"] = ro.intOr("max_iterations", 1, 1, MaxIterations)
	out["repeat"] = r
}

// exprScoped is expr for a field that provides the scoped variables
// allowed.
func (o object) exprScoped(key string, kind expr.Kind, allowed ...string) (string, bool) {
	s, ok := o.str(key)
	if !ok {
		return "", false
	}
	o.c.queueScoped(s, kind, o.p.dot(key), o.step, allowed)
	return s, true
}

func (c *checker) queueScoped(src string, kind expr.Kind, p path, step string, allowed []string) {
	c.queueExpr(src, kind, p, step)
	c.exprs[len(c.exprs)-1].scope = allowed
}

// scopeError refuses the scoped variables a field does not provide.
func scopeError(p *expr.Program, allowed []string) error {
	if p == nil {
		return nil
	}
	var bad []string
	for _, v := range p.Uses(append(slices.Clone(expr.ProgressVars), expr.LoopVars...)...) {
		if !slices.Contains(allowed, v) {
			bad = append(bad, v)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return errors.New(scopeMessage(bad))
}

func scopeMessage(bad []string) string {
	var where []string
	for _, v := range bad {
		if slices.Contains(expr.LoopVars, v) {
			where = append(where, fmt.Sprintf("%q is only available in a repeating subworkflow's expressions (repeat.until_expr, repeat.input_expr, with.input_expr)", v))
		} else {
			where = append(where, fmt.Sprintf("%q is only available in a scatter's complete_when", v))
		}
	}
	return strings.Join(where, "; ")
}
