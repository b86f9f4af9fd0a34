package engine

import (
	"context"
	"errors"

	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
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
// expression_limit for a breached cost or time limit, invalid_output for
// a value that cannot be stored, expression_error otherwise; none is
// retried.
func exprError(field string, err error) *Error {
	var bad *badValue
	if errors.As(err, &bad) {
		return &Error{Code: CodeInvalidOutput, Message: field + ": value " + bad.Error()}
	}
	code := CodeExpressionError
	if errors.Is(err, expr.ErrCostLimit) || errors.Is(err, expr.ErrTimeLimit) {
		code = CodeExpressionLimit
	}
	return &Error{Code: code, Message: field + ": " + err.Error()}
}

// badValue is an expression's value that cannot be stored: a NUL
// character (Postgres refuses it), a NaN or an infinity (JSON has none).
type badValue struct{ err error }

func (b *badValue) Error() string {
	if errors.Is(b.err, jsonvalue.ErrNotFinite) {
		return "holds a NaN or an infinity, which JSON cannot represent"
	}
	return b.err.Error()
}

// storable brings a value to the JSON value model and refuses what
// cannot be stored.
func storable(v any) (any, error) {
	out, err := jsonvalue.Normalize(v)
	if err != nil {
		return nil, &badValue{err}
	}
	if nul, found := jsonvalue.FindNUL(out); found {
		return nil, &badValue{nul}
	}
	return out, nil
}

// checkOutput brings a node's (or the run's) output to the value model
// and applies the output cap: payload_too_large past it, invalid_output
// for what cannot be stored.
func (d *decider) checkOutput(v any) (any, *Error) {
	out, _, err := jsonvalue.Check(v, d.maxOutput())
	switch {
	case err == nil:
		return out, nil
	case jsonvalue.IsTooLarge(err):
		return nil, &Error{Code: CodePayloadTooLarge, Message: "output " + err.Error()}
	}
	return nil, &Error{Code: CodeInvalidOutput, Message: "output " + (&badValue{err}).Error()}
}

func (d *decider) maxOutput() int {
	if d.e.MaxOutputBytes > 0 {
		return d.e.MaxOutputBytes
	}
	return DefaultMaxOutputBytes
}
