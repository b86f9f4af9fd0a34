package expr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
)

// Program is a compiled, type-checked expression. It is immutable and safe
// for concurrent use; its evaluation plan is built once, on first use, so
// publishing a definition only pays for parsing and checking.
type Program struct {
	src  string
	kind Kind
	ast  *cel.Ast
	env  *Env

	once sync.Once
	prg  cel.Program
	err  error
}

// Compile parses and type-checks src and checks that it can produce kind.
// The error is an [*Error] matching [ErrCompile].
func (e *Env) Compile(src string, kind Kind) (*Program, error) {
	if !kind.valid() {
		return nil, compileError(src, fmt.Sprintf("unknown result kind %d", int(kind)))
	}
	if strings.TrimSpace(src) == "" {
		return nil, compileError(src, "expression is empty")
	}
	ast, iss := e.cel.Compile(src)
	if iss.Err() != nil {
		return nil, compileError(src, issuesMessage(iss))
	}
	if !kind.admitsStatic(ast.OutputType()) {
		msg := fmt.Sprintf("expression must evaluate to %s, not %s", kind, ast.OutputType())
		return nil, compileError(src, msg)
	}
	if msg := e.overBudget(ast); msg != "" {
		return nil, compileError(src, msg)
	}
	return &Program{src: src, kind: kind, ast: ast, env: e}, nil
}

// overBudget reports an expression whose statically estimated cost is
// certain to exceed the cost limit, such as one built only from literals
// and lists.range. Estimates of what depends on variables are unbounded
// and left to the meter.
func (e *Env) overBudget(ast *cel.Ast) string {
	est, err := e.cel.EstimateCost(ast, noSizes{})
	if err != nil || est.Max == math.MaxUint64 || est.Min <= e.conf.costLimit {
		return ""
	}
	return fmt.Sprintf("estimated cost of at least %d exceeds the cost limit of %d", est.Min, e.conf.costLimit)
}

// noSizes knows no sizes beyond what the expression itself fixes.
type noSizes struct{}

func (noSizes) EstimateSize(checker.AstNode) *checker.SizeEstimate { return nil }

func (noSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// Source is the expression's text.
func (p *Program) Source() string { return p.src }

// Kind is the result kind the program was compiled for.
func (p *Program) Kind() Kind { return p.kind }

func (p *Program) plan() (cel.Program, error) {
	p.once.Do(func() {
		p.prg, p.err = p.env.cel.Program(p.ast, cel.CustomDecoratorV2(p.env.guards.decorate))
	})
	return p.prg, p.err
}

// Eval evaluates the program against v and returns a plain Go value (see
// [ToNative]). It stops with [ErrCostLimit] past the cost limit, with
// [ErrTimeLimit] past the time limit, and with [ErrInterrupted] when ctx
// ends.
func (p *Program) Eval(ctx context.Context, v Vars) (any, error) {
	prg, err := p.plan()
	if err != nil {
		return nil, evalError(p.src, "plan expression: "+err.Error())
	}
	ectx, cancel := context.WithTimeoutCause(ctx, p.env.conf.timeLimit, errTimeLimit)
	defer cancel()
	act := &activation{vars: &v, meter: newMeter(ectx, p.env.conf)}
	out, _, err := prg.ContextEval(ectx, act)
	if err != nil {
		return nil, p.runtimeError(ctx, ectx, err)
	}
	if types.IsUnknownOrError(out) {
		return nil, evalError(p.src, fmt.Sprint(out))
	}
	if !p.kind.admits(out) {
		msg := fmt.Sprintf("expression must evaluate to %s, got %s", p.kind, typeName(out))
		return nil, evalError(p.src, msg, ErrResultType)
	}
	native, err := converter{m: act.meter}.native(out)
	if err != nil {
		return nil, p.conversionError(ctx, ectx, err)
	}
	return native, nil
}

// EvalBool evaluates the program and requires a bool result.
func (p *Program) EvalBool(ctx context.Context, v Vars) (bool, error) {
	out, err := p.Eval(ctx, v)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		msg := fmt.Sprintf("expression must evaluate to bool, got %T", out)
		return false, evalError(p.src, msg, ErrResultType)
	}
	return b, nil
}

// EvalTime evaluates the program and requires a timestamp result.
func (p *Program) EvalTime(ctx context.Context, v Vars) (time.Time, error) {
	out, err := p.Eval(ctx, v)
	if err != nil {
		return time.Time{}, err
	}
	t, ok := out.(time.Time)
	if !ok {
		msg := fmt.Sprintf("expression must evaluate to timestamp, got %T", out)
		return time.Time{}, evalError(p.src, msg, ErrResultType)
	}
	return t, nil
}

// conversionError is a failure to convert the result: past a limit (the
// conversion is metered) or a value that has no plain form.
func (p *Program) conversionError(ctx, ectx context.Context, err error) *Error {
	var cancelled interpreter.EvalCancelledError
	if errors.As(err, &cancelled) {
		return p.runtimeError(ctx, ectx, err)
	}
	return evalError(p.src, err.Error())
}

// errTimeLimit is the cause of an evaluation context that ran out of time.
var errTimeLimit = errors.New("time limit")

func (p *Program) runtimeError(ctx, ectx context.Context, err error) *Error {
	var cancelled interpreter.EvalCancelledError
	switch {
	case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
		return limitError(p.src, fmt.Sprintf("cost limit of %d exceeded", p.env.conf.costLimit), ErrCostLimit)
	case ctx.Err() == nil && context.Cause(ectx) == errTimeLimit:
		return limitError(p.src, fmt.Sprintf("time limit of %s exceeded", p.env.conf.timeLimit), ErrTimeLimit)
	case ctx.Err() != nil:
		return evalError(p.src, "evaluation interrupted: "+context.Cause(ctx).Error(),
			ErrInterrupted, context.Cause(ctx))
	}
	return evalError(p.src, runtimeMessage(err))
}

// runtimeMessage adds a hint to CEL's terse overload error, met when
// operands of unrelated types meet (a string and a number, say).
func runtimeMessage(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "no such overload") {
		return msg + " (operand types do not match: convert with int(), double() or string())"
	}
	return msg
}

// maxIssues bounds how many compile issues a message lists.
const maxIssues = 3

// issuesMessage folds CEL's diagnostics into one line, each in words with
// where it is: "unknown name “x” (line 1, column 5); …".
func issuesMessage(iss *cel.Issues) string {
	errs := iss.Errors()
	parts := make([]string, 0, maxIssues+1)
	for i, e := range errs {
		if i == maxIssues {
			parts = append(parts, fmt.Sprintf("and %d more", len(errs)-maxIssues))
			break
		}
		parts = append(parts, issueText(e))
	}
	return strings.Join(parts, "; ")
}

func issueText(e *cel.Error) string {
	msg := readableIssue(strings.Join(strings.Fields(e.Message), " "))
	if e.Location == nil || e.Location.Line() < 1 {
		return msg
	}
	return fmt.Sprintf("%s (line %d, column %d)", msg, e.Location.Line(), e.Location.Column()+1)
}
