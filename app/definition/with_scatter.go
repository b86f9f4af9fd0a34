package definition

import (
	"github.com/ductor/ductor/app/expr"
)

// Scatter bounds.
const (
	// HardMaxInlineChildren is the most inline children a scatter may
	// ever have, whatever the server allows.
	HardMaxInlineChildren = 10_000
	// DefaultMaxInlineChildren is a scatter's inline bound when neither
	// the step nor the definition's limits set one.
	DefaultMaxInlineChildren = 256
)

var scatterFields = []string{
	"items_expr", "key_expr", "mode", "do", "workflow", "version", "input_expr",
	"max_inline_children", "concurrency", "interval_ms", "complete_when",
}

func withScatter(c *checker, o object, out map[string]any) {
	o.known(scatterFields...)
	requiredExpr(o, out, "items_expr", expr.KindList)
	o.exprInto(out, "key_expr", expr.KindAny)
	mode := o.enum("mode", "inline", "inline", "child_workflow")
	out["mode"] = mode
	out["concurrency"] = o.intOr("concurrency", 0, 1, HardMaxInlineChildren)
	out["interval_ms"] = o.intOr("interval_ms", 0, 0, 24*3600*1000)
	completeWhen(o, out)
	if mode == "inline" {
		scatterInline(c, o, out)
		return
	}
	scatterChildren(o, out)
}

func scatterInline(c *checker, o object, out map[string]any) {
	forbid(o, "child_workflow", "workflow", "version", "input_expr")
	limit := o.intOr("max_inline_children", int64(c.m.Limits.MaxInlineChildren), 1, HardMaxInlineChildren)
	out["max_inline_children"] = min(limit, int64(c.opts.MaxInlineChildren))
	if !o.has("do") {
		o.problem("do", "is required in inline mode: a step template of type task, http or transform")
		return
	}
	if do := c.template(o); do != nil {
		out["do"] = do
	}
}

func scatterChildren(o object, out map[string]any) {
	forbid(o, "inline", "do", "max_inline_children")
	out["workflow"] = workflowKey(o)
	out["version"] = o.intOr("version", 0, 1, 1<<31-1)
	o.exprInto(out, "input_expr", expr.KindAny)
}

// forbid reports fields that apply only in the other mode, onlyIn.
func forbid(o object, onlyIn string, keys ...string) {
	for _, k := range keys {
		if o.has(k) {
			o.problem(k, "applies only in %s mode", onlyIn)
		}
	}
}

func workflowKey(o object) string {
	k := o.required("workflow")
	if k != "" && !keyPattern.MatchString(k) {
		o.problem("workflow", "must be a definition key ([a-z0-9][a-z0-9-_]{0,62}), not %q", k)
	}
	return k
}

// template checks a scatter's `do` step template like a step of type
// task, http or transform, and returns it normalised.
func (c *checker) template(parent object) map[string]any {
	o, ok := c.object(parent.m["do"], parent.p.dot("do"), parent.step)
	if !ok {
		return nil
	}
	o.known("type", "with", "timeout", "retry")
	t := StepType(o.required("type"))
	if t != "" && !t.takesForEach() {
		o.problem("type", "a scatter template is a task, http or transform step, not %q", t)
		return nil
	}
	retry, timeout := c.attempts(o, t)
	return map[string]any{
		"type":       string(t),
		"with":       c.with(o, t),
		"timeout_ms": timeout,
		"retry":      retryMap(retry),
	}
}

func retryMap(r RetryPolicy) map[string]any {
	return map[string]any{
		"max_attempts":        int64(r.MaxAttempts),
		"initial_interval_ms": r.InitialIntervalMS,
		"backoff_coefficient": r.BackoffCoefficient,
		"max_interval_ms":     r.MaxIntervalMS,
		"jitter":              r.Jitter,
	}
}
