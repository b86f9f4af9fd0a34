package expr

import (
	"context"
	"fmt"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// Cost metering.
//
// cel-go's own runtime cost tracker (cel.CostLimit) keeps a value stack
// that grows with every comprehension iteration and is searched linearly,
// so its overhead is quadratic in list length: a 20,000-element map() takes
// hundreds of milliseconds with it and a few without. The meter below
// replaces it: a decorator wraps every non-constant node of the plan and
// charges one unit per evaluated node, plus what the node allocates: one
// unit per element of a list or entry of a map that a call, a literal or
// a comprehension builds (reading a variable allocates nothing), and one
// per [bytesPerUnit] bytes of every string or bytes value a node produces.
// Calls whose output can be far larger than their inputs (replace, join)
// are charged for their output before it is built (see guard.go). The
// meter checks the context every [DefaultInterruptEvery] units. Past the
// limit, or once the context ends, it aborts evaluation the way cel-go's
// tracker does, by panicking with interpreter.EvalCancelledError, which
// cel-go recovers and returns.

// bytesPerUnit prices the strings an evaluation builds: with the default
// limit an evaluation builds at most about 16 MB of strings.
const bytesPerUnit = 16

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

// charge spends 1 + units and aborts the evaluation past the limit or
// once the context has ended.
func (m *meter) charge(units uint64) {
	m.used += 1 + units
	if m.used > m.limit || m.used < units {
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

// cost is what producing v costs beyond the node itself: its string bytes
// and, when the node allocated it, its elements.
func cost(v ref.Val, allocated bool) uint64 {
	switch x := v.(type) {
	case types.String:
		return uint64(len(x)) / bytesPerUnit
	case types.Bytes:
		return uint64(len(x)) / bytesPerUnit
	}
	if !allocated {
		return 0
	}
	switch x := v.(type) {
	case traits.MutableLister:
		// A comprehension's accumulator grows in place, one element per
		// iteration, and each iteration is charged already.
		return 0
	case traits.Lister:
		return sizeOf(x.Size())
	case traits.Mapper:
		return sizeOf(x.Size())
	}
	return 0
}

func sizeOf(v ref.Val) uint64 {
	if n, ok := v.(types.Int); ok && n > 0 {
		return uint64(n)
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
	case *metered, *meteredAttr, *guarded, interpreter.InterpretableConst:
		return i, nil
	case interpreter.InterpretableAttribute:
		return &meteredAttr{InterpretableAttribute: x}, nil
	case interpreter.InterpretableCall:
		if g := guard(x); g != nil {
			return g, nil
		}
	}
	return &metered{InterpretableV2: i}, nil
}

type metered struct{ interpreter.InterpretableV2 }

func (n *metered) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return charged(f, n.InterpretableV2.Exec(f), true)
}

func (n *metered) Eval(a interpreter.Activation) ref.Val {
	return charged(a, n.InterpretableV2.Eval(a), true)
}

type meteredAttr struct {
	interpreter.InterpretableAttribute
}

func (n *meteredAttr) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return charged(f, n.InterpretableAttribute.Exec(f), false)
}

func (n *meteredAttr) Eval(a interpreter.Activation) ref.Val {
	return charged(a, n.InterpretableAttribute.Eval(a), false)
}

func charged(a interpreter.Activation, v ref.Val, allocated bool) ref.Val {
	if m := meterOf(a); m != nil {
		m.charge(cost(v, allocated))
	}
	return v
}
