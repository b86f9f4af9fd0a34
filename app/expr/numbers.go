package expr

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/env"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/stdlib"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Mixed arithmetic.
//
// JSON has one kind of number; Ductor's values have two (an integral
// literal within int64 is an int, anything else a double), so `price * 2`
// meets a double and an int, and `count + 0.5` an int and a double. CEL's
// standard +, -, * and / take operands of one type only. The environment
// replaces them with the same operators, with the same overloads, plus
// (int, double), (double, int), (uint, double) and (double, uint), which
// convert the integer to a double and give a double. Everything else
// (int with int, strings, lists, timestamps and durations) behaves exactly
// as in the standard library. Comparisons across int, uint and double are
// CEL's own (cel.CrossTypeNumericComparisons).

// mixedOperators are the operators extended, with the standard behaviour
// each falls back to.
var mixedOperators = map[string]struct {
	op    func(a, b float64) float64
	std   func(l, r ref.Val) ref.Val
	trait int
}{
	operators.Add: {func(a, b float64) float64 { return a + b },
		func(l, r ref.Val) ref.Val { return l.(traits.Adder).Add(r) }, traits.AdderType},
	operators.Subtract: {func(a, b float64) float64 { return a - b },
		func(l, r ref.Val) ref.Val { return l.(traits.Subtractor).Subtract(r) }, traits.SubtractorType},
	operators.Multiply: {func(a, b float64) float64 { return a * b },
		func(l, r ref.Val) ref.Val { return l.(traits.Multiplier).Multiply(r) }, traits.MultiplierType},
	operators.Divide: {func(a, b float64) float64 { return a / b },
		func(l, r ref.Val) ref.Val { return l.(traits.Divider).Divide(r) }, traits.DividerType},
}

// mixedPairs are the operand types added to each operator, with the
// overload id suffix.
var mixedPairs = []struct {
	suffix string
	l, r   *cel.Type
}{
	{"int64_double", cel.IntType, cel.DoubleType},
	{"double_int64", cel.DoubleType, cel.IntType},
	{"uint64_double", cel.UintType, cel.DoubleType},
	{"double_uint64", cel.DoubleType, cel.UintType},
}

// standardWithoutMixed is the standard library without the operators that
// numericOperators declares again.
func standardWithoutMixed() cel.EnvOption {
	subset := &env.LibrarySubset{}
	for name := range mixedOperators {
		subset.ExcludeFunctions = append(subset.ExcludeFunctions, &env.Function{Name: name})
	}
	return cel.StdLib(cel.StdLibSubset(subset))
}

// numericOperators declares +, -, * and / with the standard overloads and
// the mixed ones.
func numericOperators() []cel.EnvOption {
	var out []cel.EnvOption
	for _, fn := range stdlib.Functions() {
		m, ok := mixedOperators[fn.Name()]
		if !ok {
			continue
		}
		var opts []cel.FunctionOpt
		for _, o := range fn.OverloadDecls() {
			opts = append(opts, cel.Overload(o.ID(), o.ArgTypes(), o.ResultType()))
		}
		for _, p := range mixedPairs {
			id := fn.Name() + "_" + p.suffix
			opts = append(opts, cel.Overload(id, []*cel.Type{p.l, p.r}, cel.DoubleType))
		}
		opts = append(opts, cel.SingletonBinaryBinding(mixedBinary(m.op, m.std), m.trait))
		out = append(out, cel.Function(fn.Name(), opts...))
	}
	return out
}

func mixedBinary(op func(a, b float64) float64, std func(l, r ref.Val) ref.Val) func(l, r ref.Val) ref.Val {
	return func(l, r ref.Val) ref.Val {
		if a, b, ok := mixedOperands(l, r); ok {
			return types.Double(op(a, b))
		}
		return std(l, r)
	}
}

// mixedOperands converts an (int|uint, double) or (double, int|uint) pair
// to two float64s.
func mixedOperands(l, r ref.Val) (float64, float64, bool) {
	ld, lIsDouble := l.(types.Double)
	rd, rIsDouble := r.(types.Double)
	switch {
	case lIsDouble && !rIsDouble:
		if b, ok := integerAsDouble(r); ok {
			return float64(ld), b, true
		}
	case rIsDouble && !lIsDouble:
		if a, ok := integerAsDouble(l); ok {
			return a, float64(rd), true
		}
	}
	return 0, 0, false
}

func integerAsDouble(v ref.Val) (float64, bool) {
	switch x := v.(type) {
	case types.Int:
		return float64(x), true
	case types.Uint:
		return float64(x), true
	}
	return 0, false
}
