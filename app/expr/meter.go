package expr

import (
	"context"
	"fmt"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// Cost metering.
//
// cel-go's own runtime cost tracker (cel.CostLimit) keeps a value stack
// that grows with every comprehension iteration and is searched linearly,
// so its overhead is quadratic in list length: a 20,000-element map() takes
// hundreds of milliseconds with it and a few without. The meter below
// replaces it: a decorator wraps every non-constant node of the plan and
// charges one unit per evaluated node, plus one per [bytesPerUnit] bytes
// of every string or bytes value a node produces, and checks the context
// every [DefaultInterruptEvery] units. Past the limit, or once the context
// ends, it aborts evaluation the way cel-go's tracker does, by panicking
// with interpreter.EvalCancelledError, which cel-go recovers and returns.

// bytesPerUnit prices the strings an evaluation builds.
const bytesPerUnit = 64

// meterVar is the hidden variable through which nodes find the evaluation's
// meter; "@" cannot start an identifier in CEL source.
const meterVar = "@meter"

// meter is one evaluation's budget. An evaluation runs on one goroutine.
type meter struct {
	limit     uint64
	used      uint64
	every     uint64
	nextCheck uint64
	done      <-chan struct{}
}

func newMeter(ctx context.Context, c config) *meter {
	every := uint64(c.interruptEvery)
	return &meter{limit: c.costLimit, every: every, nextCheck: every, done: ctx.Done()}
}

func (m *meter) charge(v ref.Val) {
	m.used += 1 + producedBytes(v)/bytesPerUnit
	if m.used > m.limit {
		panic(interpreter.EvalCancelledError{
			Cause:   interpreter.CostLimitExceeded,
			Message: fmt.Sprintf("cost limit of %d exceeded", m.limit),
		})
	}
	if m.used < m.nextCheck {
		return
	}
	m.nextCheck = m.used + m.every
	select {
	case <-m.done:
		panic(interpreter.EvalCancelledError{Cause: interpreter.ContextCancelled, Message: "evaluation interrupted"})
	default:
	}
}

func producedBytes(v ref.Val) uint64 {
	switch x := v.(type) {
	case types.String:
		return uint64(len(x))
	case types.Bytes:
		return uint64(len(x))
	}
	return 0
}

func meterOf(a interpreter.Activation) *meter {
	v, ok := a.ResolveName(meterVar)
	if !ok {
		return nil
	}
	m, _ := v.(*meter)
	return m
}

// meterDecorator wraps nodes so that evaluating them charges the meter.
// Constants are free; attributes keep their attribute interface so the
// planner can still fold qualifiers into them.
func meterDecorator(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	switch x := i.(type) {
	case *metered, *meteredAttr, interpreter.InterpretableConst:
		return i, nil
	case interpreter.InterpretableAttribute:
		return &meteredAttr{InterpretableAttribute: x}, nil
	}
	return &metered{InterpretableV2: i}, nil
}

type metered struct{ interpreter.InterpretableV2 }

func (n *metered) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return charged(f, n.InterpretableV2.Exec(f))
}

func (n *metered) Eval(a interpreter.Activation) ref.Val {
	return charged(a, n.InterpretableV2.Eval(a))
}

type meteredAttr struct {
	interpreter.InterpretableAttribute
}

func (n *meteredAttr) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return charged(f, n.InterpretableAttribute.Exec(f))
}

func (n *meteredAttr) Eval(a interpreter.Activation) ref.Val {
	return charged(a, n.InterpretableAttribute.Eval(a))
}

func charged(a interpreter.Activation, v ref.Val) ref.Val {
	if m := meterOf(a); m != nil {
		m.charge(v)
	}
	return v
}
