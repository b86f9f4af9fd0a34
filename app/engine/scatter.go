package engine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

// Scatter bounds.
const (
	DefaultMaxInlineChildren = 256
	MaxChildren              = 10000
)

// startScatter evaluates the items, creates one child node per item
// (REF[KEY]) and dispatches the first ones. A for_each step is a scatter
// of itself.
func (d *decider) startScatter(n *Node) {
	step := d.g.steps[n.Ref]
	w := with(step.With)
	n.Attempt++
	d.setNode(n, NodeRunning, "")
	items, err := d.scatterItems(step)
	if err != nil {
		d.recordAttempt(n, nil, err)
		d.fail(n, err)
		return
	}
	if limit := d.childLimit(step); len(items) > limit {
		err := &Error{Code: CodeTooManyChildren, Message: fmt.Sprintf("%d items exceed the limit of %d children", len(items), limit)}
		d.recordAttempt(n, nil, err)
		d.fail(n, err)
		return
	}
	keys, kerr := d.childKeys(step, items)
	if kerr != nil {
		d.recordAttempt(n, nil, kerr)
		d.fail(n, kerr)
		return
	}
	n.Scatter = &ScatterState{Total: len(items)}
	for i, it := range items {
		d.insert(&Node{
			ID: n.Ref + "[" + keys[i] + "]", Ref: n.Ref, State: NodePending, Generation: n.Generation,
			Child: &ChildInfo{Scatter: n.ID, Index: i, Key: keys[i], Item: it},
		})
	}
	if w.str("mode") == "child_workflow" {
		d.wait(n, &Waiting{Type: WaitChild}, "", time.Time{})
	}
	d.scatterProgress(n.ID)
}

func (d *decider) scatterItems(step *definition.Step) ([]any, *Error) {
	src, field := step.ForEach, "for_each"
	if src == "" {
		src, field = with(step.With).str("items_expr"), "with.items_expr"
	}
	v, err := d.eval(src, expr.KindList, nil)
	if err != nil {
		return nil, exprError(field, err)
	}
	items, ok := v.([]any)
	if !ok {
		return nil, &Error{Code: CodeExpressionError, Message: field + ": not a list"}
	}
	return items, nil
}

func (d *decider) childLimit(step *definition.Step) int {
	w := with(step.With)
	if w.str("mode") == "child_workflow" {
		return MaxChildren
	}
	limit := int(w.num("max_inline_children"))
	if limit == 0 {
		limit = d.g.m.Limits.MaxInlineChildren
	}
	if limit == 0 {
		limit = DefaultMaxInlineChildren
	}
	return min(limit, MaxChildren)
}

// childKeys evaluates key_expr per item (default: the index); keys must
// be unique.
func (d *decider) childKeys(step *definition.Step, items []any) ([]string, *Error) {
	src := with(step.With).str("key_expr")
	keys := make([]string, len(items))
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		keys[i] = strconv.Itoa(i)
		if src != "" {
			v, err := d.eval(src, expr.KindAny, func(v *expr.Vars) { v.Item, v.Index = it, i })
			if err != nil {
				return nil, exprError("with.key_expr", err)
			}
			keys[i] = fmt.Sprint(v)
		}
		if seen[keys[i]] {
			return nil, &Error{Code: CodeInvalidStep, Message: "duplicate scatter key " + strconv.Quote(keys[i])}
		}
		seen[keys[i]] = true
	}
	return keys, nil
}

// scatterProgress dispatches children up to the concurrency bound and
// completes the scatter when every child is terminal. It does not
// re-enter itself: a pure child finishing inside the loop only updates
// the counters.
func (d *decider) scatterProgress(id string) {
	n := d.get(id)
	if n == nil || n.Scatter == nil || n.State.Terminal() || d.filling(id) {
		return
	}
	n = d.mut(id)
	if !d.checkComplete(n) {
		return // waiting for the children complete_when reads, or failed
	}
	if !n.Scatter.CompletedEarly {
		d.setFilling(id, true)
		d.fill(n)
		d.setFilling(id, false)
	}
	if n.State.Terminal() {
		return
	}
	if n.Scatter.Done() || n.Scatter.CompletedEarly {
		d.completeScatter(n)
	}
}

func (d *decider) fill(n *Node) {
	s, w := n.Scatter, with(d.g.steps[n.Ref].With)
	conc, interval := int(w.num("concurrency")), w.ms("interval_ms")
	for s.Next < s.Total && (conc <= 0 || s.InFlight < conc) && !n.State.Terminal() && !s.CompletedEarly {
		cid, ok := d.children[n.ID][s.Next]
		if !ok {
			want := s.Total
			if conc > 0 {
				want = min(s.Next+conc-s.InFlight, s.Total)
			}
			d.need(Need{Scatter: n.ID, From: s.Next, To: want})
			return
		}
		runAt := d.now
		if interval > 0 && !s.LastDispatch.IsZero() {
			runAt = maxTime(d.now, s.LastDispatch.Add(interval))
		}
		s.LastDispatch = runAt
		s.Next++
		s.InFlight++
		c := d.mut(cid)
		d.setNode(c, NodeReady, "")
		d.execute(c, runAt)
		if c.State.Terminal() && !d.checkComplete(n) {
			return // a pure child finished and complete_when needs more children
		}
	}
}

// childDone counts a terminal child on its scatter.
func (d *decider) childDone(c *Node) {
	sc := d.get(c.Child.Scatter)
	if sc == nil || sc.Scatter == nil || sc.State.Terminal() || sc.Generation != c.Generation {
		return
	}
	sc = d.mut(c.Child.Scatter)
	sc.Scatter.InFlight--
	if c.State == NodeSucceeded {
		sc.Scatter.Succeeded++
	} else {
		sc.Scatter.Failed++
	}
	d.scatterProgress(sc.ID)
}

// completeScatter needs every child loaded: its output is the list of
// child outcomes in item order (for_each: the partition gather of it).
func (d *decider) completeScatter(n *Node) {
	s := n.Scatter
	kids := d.children[n.ID]
	for i := 0; i < s.Total; i++ {
		if _, ok := kids[i]; !ok {
			d.need(Need{Scatter: n.ID, From: 0, To: s.Total})
			return
		}
	}
	if s.CompletedEarly {
		d.cancelUnfinished(n)
	}
	outcomes := make([]any, 0, s.Succeeded+s.Failed)
	for i := 0; i < s.Total; i++ {
		if c := d.get(kids[i]); counted(c) {
			outcomes = append(outcomes, childOutcome(c))
		}
	}
	var out any = outcomes
	if d.g.steps[n.Ref].ForEach != "" {
		out = collapse(outcomes, "partition")
	}
	checked, err := d.checkOutput(out)
	d.recordAttempt(n, checked, err)
	if err != nil {
		d.fail(n, err)
		return
	}
	d.route(n, definition.OutcomeSuccess, checked)
}

// counted reports whether a child finished as its scatter counts it:
// succeeded, failed, or cancelled by an operator (a failure). Children
// cancelled because the scatter completed early are not.
func counted(c *Node) bool {
	return c.State == NodeSucceeded || c.State == NodeFailed || (c.State == NodeCancelled && c.Error != nil)
}

// childOutcome is a finished child as the scatter's output and the
// gather see it.
func childOutcome(c *Node) map[string]any {
	o := map[string]any{"key": c.Child.Key, "state": string(c.State), "output": c.Output, "error": nil}
	if c.Error != nil {
		o["error"] = map[string]any{"code": c.Error.Code, "message": c.Error.Message}
	}
	return o
}

// gather collapses the scatter's outcome list by strategy.
func (d *decider) gather(sp spec) (any, *Error) {
	src := d.get(sp.with.str("scatter_ref"))
	var outcomes []any
	if src != nil {
		switch v := src.Output.(type) {
		case []any:
			outcomes = v
		case map[string]any: // a for_each node: already collapsed
			return v, nil
		}
	}
	strategy := sp.with.strOr("strategy", "partition")
	out := collapse(outcomes, strategy)
	if errs := out["error"].(map[string]any); strategy == "raise" && len(errs) > 0 {
		return nil, &Error{Code: CodeGatherRaised, Message: fmt.Sprintf("%d children failed", len(errs))}
	}
	return out, nil
}

// collapse builds {"result": [...], "error": {key: error}}.
func collapse(outcomes []any, strategy string) map[string]any {
	result, errs := []any{}, map[string]any{}
	for _, o := range outcomes {
		m, _ := o.(map[string]any)
		if m["state"] == string(NodeSucceeded) {
			result = append(result, m["output"])
			continue
		}
		if m["state"] != string(NodeFailed) && m["error"] == nil {
			continue // not finished: cancelled by early completion
		}
		key, _ := m["key"].(string)
		switch strategy {
		case "drop":
		case "include":
			result = append(result, map[string]any{"error": m["error"]})
			errs[key] = m["error"]
		default:
			errs[key] = m["error"]
		}
	}
	return map[string]any{"result": result, "error": errs}
}

// stopChildren cancels the live children of a scatter that ended, saying
// why (reason; none when the run ended); those not loaded are asked for,
// and the next call's sweep cancels them.
func (d *decider) stopChildren(n *Node, reason string) {
	live := n.Scatter.Total - n.Scatter.Succeeded - n.Scatter.Failed
	loaded := 0
	for _, cid := range d.childIDs(n.ID) {
		c := d.get(cid)
		if c.State.Terminal() {
			continue
		}
		loaded++
		d.stopNode(d.mut(cid), NodeCancelled, reason)
	}
	if loaded < live {
		d.need(Need{Scatter: n.ID, From: 0, To: n.Scatter.Total, Live: true})
	}
}

// sweep cancels loaded children whose scatter has ended or moved to
// another generation.
func (d *decider) sweep() {
	sids := slices.Sorted(maps.Keys(d.children))
	for _, sid := range sids {
		sc := d.get(sid)
		if sc == nil {
			continue
		}
		for _, cid := range d.childIDs(sid) {
			c := d.get(cid)
			if c.State.Terminal() || (!sc.State.Terminal() && sc.Generation == c.Generation) {
				continue
			}
			d.stopNode(d.mut(cid), NodeCancelled, d.sweepReason(sc))
		}
	}
}

// sweepReason says why sweep cancels a scatter's child: the scatter was
// stopped (its cancel reason) or ended otherwise, the run ended (none),
// or the scatter moved to a new generation.
func (d *decider) sweepReason(sc *Node) string {
	switch {
	case sc.CancelReason != "":
		return "scatter " + sc.ID + " cancelled (" + sc.CancelReason + ")"
	case sc.State.Terminal() && sc.State != NodeCancelled:
		return "scatter " + sc.ID + " " + string(sc.State)
	case d.runRow.Status.Terminal():
		return ""
	}
	return "scatter " + sc.ID + " was retried"
}

// childIDs lists a scatter's loaded children in index order.
func (d *decider) childIDs(sid string) []string {
	kids := d.children[sid]
	idx := slices.Sorted(maps.Keys(kids))
	ids := make([]string, len(idx))
	for i, k := range idx {
		ids[i] = kids[k]
	}
	return ids
}

func (d *decider) need(nd Need) {
	for _, x := range d.out.Needs {
		if x == nd {
			return
		}
	}
	d.out.Needs = append(d.out.Needs, nd)
}

func (d *decider) filling(id string) bool { return d.fillingSet[id] }

func (d *decider) setFilling(id string, on bool) {
	if d.fillingSet == nil {
		d.fillingSet = map[string]bool{}
	}
	d.fillingSet[id] = on
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
