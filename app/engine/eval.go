package engine

import (
	"context"
	"errors"

	"github.com/ductor/ductor/app/expr"
)

// Evaluator evaluates one CEL expression. It is the engine's only seam to
// CEL; the default is [NewCELEvaluator].
type Evaluator interface {
	Eval(ctx context.Context, src string, kind expr.Kind, vars expr.Vars) (any, error)
}

// celEvaluator evaluates through a program cache, so each expression is
// compiled once per process.
type celEvaluator struct{ cache *expr.Cache }

// NewCELEvaluator evaluates with programs from cache.
func NewCELEvaluator(cache *expr.Cache) Evaluator { return celEvaluator{cache: cache} }

func (c celEvaluator) Eval(ctx context.Context, src string, kind expr.Kind, vars expr.Vars) (any, error) {
	prg, err := c.cache.Get(src, kind)
	if err != nil {
		return nil, err
	}
	return prg.Eval(ctx, vars)
}

// Uses tells which of names src reads as variables.
func (c celEvaluator) Uses(src string, kind expr.Kind, names ...string) []string {
	prg, err := c.cache.Get(src, kind)
	if err != nil {
		return nil
	}
	return prg.Uses(names...)
}

// exprError turns an evaluation failure into the node error: code
// expression_limit for a breached cost or time limit, expression_error
// otherwise; neither is retried.
func exprError(field string, err error) *Error {
	code := CodeExpressionError
	if errors.Is(err, expr.ErrCostLimit) || errors.Is(err, expr.ErrTimeLimit) {
		code = CodeExpressionLimit
	}
	return &Error{Code: code, Message: field + ": " + err.Error()}
}
