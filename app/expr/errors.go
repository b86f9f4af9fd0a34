package expr

import (
	"errors"
	"fmt"
)

// Codes carried by [Error.Code].
const (
	// CodeInvalidExpression marks an expression that does not compile.
	CodeInvalidExpression = "invalid_expression"
	// CodeExpressionError marks an evaluation failure: a runtime error, an
	// unexpected result type or an interruption. A node failing with it is
	// not retried.
	CodeExpressionError = "expression_error"
	// CodeExpressionLimit marks an evaluation stopped by a resource limit:
	// its cost limit or its time limit. A node failing with it is not
	// retried.
	CodeExpressionLimit = "expression_limit"
)

// Sentinels matched with errors.Is against an [*Error].
var (
	// ErrCompile: the expression does not parse, type-check, or fit the
	// size, nesting or result-type bounds.
	ErrCompile = errors.New("invalid expression")
	// ErrEval: evaluation failed; every evaluation error matches it.
	ErrEval = errors.New("expression evaluation failed")
	// ErrCostLimit: evaluation exceeded the cost limit.
	ErrCostLimit = errors.New("expression cost limit exceeded")
	// ErrTimeLimit: evaluation ran past its time limit.
	ErrTimeLimit = errors.New("expression time limit exceeded")
	// ErrInterrupted: evaluation stopped because its caller's context
	// ended.
	ErrInterrupted = errors.New("expression evaluation interrupted")
	// ErrResultType: the value is not of the expected [Kind].
	ErrResultType = errors.New("unexpected expression result type")
)

// Error is a compile or evaluation failure of one expression. Callers that
// know where the expression lives set Step and Field (see [WithLocation]).
type Error struct {
	// Step is the ref of the step holding the expression, if any.
	Step string
	// Field names the expression's field, e.g. "with.items_expr".
	Field string
	// Message is a one-line human explanation.
	Message string
	// Code is CodeInvalidExpression, CodeExpressionError or
	// CodeExpressionLimit.
	Code string
	// Expr is the expression's source.
	Expr string

	causes []error
}

func (e *Error) Error() string {
	switch {
	case e.Step != "" && e.Field != "":
		return fmt.Sprintf("step %q, %s: %s", e.Step, e.Field, e.Message)
	case e.Step != "":
		return fmt.Sprintf("step %q: %s", e.Step, e.Message)
	case e.Field != "":
		return fmt.Sprintf("%s: %s", e.Field, e.Message)
	}
	return e.Message
}

// Unwrap exposes the sentinels (and any context error) the failure matches.
func (e *Error) Unwrap() []error { return e.causes }

// WithLocation returns a copy of e that names the step and field holding
// the expression.
func (e *Error) WithLocation(step, field string) *Error {
	c := *e
	c.Step, c.Field = step, field
	return &c
}

// WithLocation sets the step and field on err if it is an [*Error] and
// returns it; any other error is wrapped with the location.
func WithLocation(err error, step, field string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e.WithLocation(step, field)
	}
	return fmt.Errorf("step %q, %s: %w", step, field, err)
}

func compileError(src, msg string) *Error {
	return &Error{Message: msg, Code: CodeInvalidExpression, Expr: src, causes: []error{ErrCompile}}
}

func evalError(src, msg string, causes ...error) *Error {
	return &Error{
		Message: msg,
		Code:    CodeExpressionError,
		Expr:    src,
		causes:  append([]error{ErrEval}, causes...),
	}
}

func limitError(src, msg string, cause error) *Error {
	e := evalError(src, msg, cause)
	e.Code = CodeExpressionLimit
	return e
}
