package engine

import (
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/flowcontrol"
)

// flowKey evaluates a step's concurrency pool: its key and its limit,
// with the node's variables (a scatter child's item, index and key too).
// An expression that fails, or a value that cannot be a key or a limit,
// fails the node like any expression of its `with`.
func (d *decider) flowKey(c *definition.StepConcurrency, extra func(*expr.Vars)) (string, int, *Error) {
	if c == nil {
		return "", 0, nil
	}
	v, err := d.eval(c.KeyExpr, expr.KindAny, extra)
	if err != nil {
		return "", 0, exprError("concurrency.key_expr", err)
	}
	key, err := flowcontrol.KeyText(v)
	if err != nil {
		return "", 0, exprError("concurrency.key_expr", err)
	}
	if c.LimitExpr == "" {
		return key, c.Limit, nil
	}
	v, err = d.eval(c.LimitExpr, expr.KindInt, extra)
	if err != nil {
		return "", 0, exprError("concurrency.limit", err)
	}
	limit, err := flowcontrol.LimitOf(v)
	if err != nil {
		return "", 0, exprError("concurrency.limit", err)
	}
	return key, limit, nil
}

// templateFlow reads a scatter template's concurrency from the manifest.
func templateFlow(w with) *definition.StepConcurrency {
	if w == nil {
		return nil
	}
	return &definition.StepConcurrency{KeyExpr: w.str("key_expr"), Limit: int(w.num("limit")), LimitExpr: w.str("limit_expr")}
}
