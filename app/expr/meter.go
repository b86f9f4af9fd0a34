package expr

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/cel-go/common/overloads"
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
// a comprehension builds, and one per [bytesPerUnit] bytes of every
// string or bytes value a node produces.
//
// Reading a variable charges the whole size of the value read (every
// element and entry at any depth, and its strings' bytes), each time it is
// read: a read costs the runtime nothing, but what an expression builds
// from references (a list of a thousand references to the same large
// input, say) costs whoever walks or copies it, and every function's
// work is linear in its inputs' sizes or guarded. So everything an
// evaluation can reach has been paid for once per reference, and the
// conversion of its result (also metered) copies no more than the limit
// allows. A comprehension's own accumulator is read for free, and so is
// a variable whose only use is size().
//
// Calls whose output or work can be far larger than their inputs
// (replace, join, flatten, distinct, the sets functions) are charged
// before they run (see guard.go). The meter checks the context every
// [DefaultInterruptEvery] units. Past the limit, or once the context ends,
// it aborts evaluation the way cel-go's tracker does, by panicking with
// interpreter.EvalCancelledError, which cel-go recovers and returns.

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

// remaining is what is left of the budget.
func (m *meter) remaining() uint64 {
	if m.used >= m.limit {
		return 0
	}
	return m.limit - m.used
}

func newMeter(ctx context.Context, c config) *meter {
	every := uint64(c.interruptEvery)
	return &meter{limit: c.costLimit, every: every, nextCheck: every, done: ctx.Done()}
}

// charge spends 1 + units and aborts the evaluation past the limit or
// once the context has ended.
func (m *meter) charge(units uint64) {
	if err := m.spend(units); err != nil {
		panic(*err)
	}
}

// spend is charge without the panic, for work done outside cel-go's
// interpreter (the result's conversion).
func (m *meter) spend(units uint64) *interpreter.EvalCancelledError {
	m.used += 1 + units
	if m.used > m.limit || m.used < units {
		return &interpreter.EvalCancelledError{
			Cause:   interpreter.CostLimitExceeded,
			Message: fmt.Sprintf("cost limit of %d exceeded", m.limit),
		}
	}
	if m.used < m.nextCheck {
		return nil
	}
	m.nextCheck = m.used + m.every
	select {
	case <-m.done:
		return &interpreter.EvalCancelledError{Cause: interpreter.ContextCancelled, Message: "evaluation interrupted"}
	default:
	}
	return nil
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

// decorate wraps nodes so that evaluating them charges the meter.
// Constants are free; attributes keep their attribute interface so the
// planner can still fold qualifiers into them.
func (g *guards) decorate(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	switch x := i.(type) {
	case *metered, *meteredAttr, *guarded, interpreter.InterpretableConst:
		return i, nil
	case interpreter.InterpretableAttribute:
		return &meteredAttr{InterpretableAttribute: x, deep: true}, nil
	case interpreter.InterpretableCall:
		if n := g.guard(x); n != nil {
			return n, nil
		}
		sizeOnly(x)
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

// meteredAttr is a variable read, with any field selections and indexes
// folded into it. With deep set it charges the whole size of what it
// reads, unless that is a comprehension's accumulator (the only mutable
// list an expression sees), which grows one charged element at a time and
// is read on every iteration.
type meteredAttr struct {
	interpreter.InterpretableAttribute
	deep bool
}

func (n *meteredAttr) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return n.read(f, n.InterpretableAttribute.Exec(f))
}

func (n *meteredAttr) Eval(a interpreter.Activation) ref.Val {
	return n.read(a, n.InterpretableAttribute.Eval(a))
}

func (n *meteredAttr) read(a interpreter.Activation, v ref.Val) ref.Val {
	m := meterOf(a)
	if m == nil {
		return v
	}
	if _, acc := v.(traits.MutableLister); n.deep && !acc {
		m.charge(deepSize(v, m.remaining()))
	} else {
		m.charge(cost(v, false))
	}
	return v
}

// sizeOnly makes a variable read whose value only size() looks at charge
// for the read alone: size() does not walk its argument.
func sizeOnly(c interpreter.InterpretableCall) {
	if c.Function() != overloads.Size {
		return
	}
	for _, arg := range c.Args() {
		if a, ok := arg.(*meteredAttr); ok {
			a.deep = false
		}
	}
}

// deepSize is what a value read from a variable costs: one unit per
// element or entry at any depth plus one per [bytesPerUnit] bytes of its
// strings (keys included). It stops counting past limit.
func deepSize(v ref.Val, limit uint64) uint64 {
	switch x := v.(type) {
	case types.String:
		return uint64(len(x)) / bytesPerUnit
	case types.Bytes:
		return uint64(len(x)) / bytesPerUnit
	case types.Int, types.Double, types.Bool, types.Uint, types.Null:
		return 0
	}
	s := sizer{limit: limit}
	s.val(v)
	return s.n
}

// sizer adds up a value's size, stopping once past its limit.
type sizer struct{ n, limit uint64 }

func (s *sizer) over() bool { return s.n > s.limit }

func (s *sizer) bytes(n int) { s.n += uint64(n) / bytesPerUnit }

func (s *sizer) val(v ref.Val) {
	switch x := v.(type) {
	case types.String:
		s.bytes(len(x))
	case types.Bytes:
		s.bytes(len(x))
	case *types.Optional:
		if x.HasValue() {
			s.val(x.GetValue())
		}
	case traits.Lister:
		if native, ok := x.Value().([]any); ok {
			s.native(native)
			return
		}
		n := sizeOf(x.Size())
		for i := uint64(0); i < n && !s.over(); i++ {
			s.n++
			s.val(x.Get(types.Int(i)))
		}
	case traits.Mapper:
		if native, ok := x.Value().(map[string]any); ok {
			s.native(native)
			return
		}
		for it := x.Iterator(); it.HasNext() == types.True && !s.over(); {
			k := it.Next()
			s.n++
			s.val(k)
			s.val(x.Get(k))
		}
	}
}

// native sizes a value of the JSON model without adapting it.
func (s *sizer) native(v any) {
	switch x := v.(type) {
	case string:
		s.bytes(len(x))
	case json.Number:
		s.bytes(len(x))
	case []any:
		for _, e := range x {
			if s.over() {
				return
			}
			s.n++
			s.native(e)
		}
	case map[string]any:
		for k, e := range x {
			if s.over() {
				return
			}
			s.n++
			s.bytes(len(k))
			s.native(e)
		}
	case ref.Val:
		s.val(x)
	case nil, bool, int64, float64, int:
	default:
		s.val(jsonAdapter{}.NativeToValue(x))
	}
}

func charged(a interpreter.Activation, v ref.Val, allocated bool) ref.Val {
	if m := meterOf(a); m != nil {
		m.charge(cost(v, allocated))
	}
	return v
}
