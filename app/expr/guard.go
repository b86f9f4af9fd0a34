package expr

import (
	"strings"
	"unicode/utf8"

	"fmt"
	"math/bits"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/functions"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// Guarded calls: functions whose output or work can be far larger than
// their inputs, so that charging for the result after it is built would
// come too late (`s.replace("", s)` squares a string's length,
// `list.join(sep)` multiplies a separator by a list's length, flatten()
// copies every nested element, and distinct() and the sets functions
// compare every element of one list with every element of the other). A
// guarded node evaluates the arguments itself, charges the meter for the
// output's size or the comparisons it may make, and only then runs, the
// way cel-go's strings extension does.

// outputBound returns what a call costs in units, or false when the
// arguments are not of the overload's types.
type outputBound func(args []ref.Val) (uint64, bool)

// guardedCall sizes a call's output and builds it from evaluated
// arguments.
type guardedCall struct {
	bound outputBound
	build func(args []ref.Val) ref.Val
}

var guardedCalls = map[string]guardedCall{
	"string_replace_string_string":     {replaceBound, replaceBuild},
	"string_replace_string_string_int": {replaceBound, replaceBuild},
	"list_join":                        {joinBound, joinBuild},
	"list_join_string":                 {joinBound, joinBuild},
	"list_flatten":                     {flattenBound, flattenBuild},
	"list_flatten_int":                 {flattenBound, flattenBuild},
	"list_distinct":                    {distinctBound, distinctBuild},
	"list_sets_contains_list":          {containsBound, setsContains},
	"list_sets_intersects_list":        {intersectsBound, setsIntersects},
	"list_sets_equivalent_list":        {equivalentBound, setsEquivalent},
}

// boundFuncs are guarded functions that keep cel-go's implementation: the
// node charges for the bound, then calls the function's binding with the
// arguments it evaluated.
var boundFuncs = map[string]outputBound{
	// format walks its arguments several times over and builds a string
	// several times their size; the string is charged once built.
	"format": formatBound,
	// sort and sortBy compare n log n times.
	"sort":                  sortBound,
	"@sortByAssociatedKeys": sortBound,
	// strings.quote builds its output rune by rune.
	"strings.quote": quoteBound,
	// The strings extension's functions copy their receiver into runes,
	// four bytes each, on every call; indexOf and lastIndexOf then compare
	// the substring at every position.
	"charAt":      runesBound,
	"substring":   runesBound,
	"lowerAscii":  runesBound,
	"upperAscii":  runesBound,
	"trim":        runesBound,
	"reverse":     runesBound,
	"indexOf":     searchBound,
	"lastIndexOf": searchBound,
	// A regular expression's match takes time in the product of the
	// string's length and the pattern's.
	"matches": matchBound,
}

type guarded struct {
	interpreter.InterpretableCall
	call guardedCall
}

// guards finds the guarded calls of a plan. It keeps the bindings of the
// functions in boundFuncs.
type guards struct {
	impls map[string]*functions.Overload
}

func newGuards(env *cel.Env) (*guards, error) {
	g := &guards{impls: map[string]*functions.Overload{}}
	fns := env.Functions()
	for name := range boundFuncs {
		bindings, err := fns[name].Bindings()
		if err != nil {
			return nil, fmt.Errorf("expr: bindings of %s: %w", name, err)
		}
		for _, b := range bindings {
			g.impls[b.Operator] = b
		}
	}
	return g, nil
}

func (g *guards) guard(c interpreter.InterpretableCall) interpreter.InterpretableV2 {
	if call, ok := guardedCalls[c.OverloadID()]; ok {
		return &guarded{InterpretableCall: c, call: call}
	}
	bound, ok := boundFuncs[c.Function()]
	if !ok {
		return nil
	}
	impl := g.impls[c.OverloadID()]
	if impl == nil {
		impl = g.impls[c.Function()]
	}
	if impl == nil {
		return nil
	}
	return &guarded{InterpretableCall: c, call: guardedCall{bound: bound, build: invoke(impl)}}
}

// invoke calls a binding with evaluated arguments.
func invoke(o *functions.Overload) func(args []ref.Val) ref.Val {
	return func(args []ref.Val) ref.Val {
		switch {
		case len(args) == 1 && o.Unary != nil:
			return o.Unary(args[0])
		case len(args) == 2 && o.Binary != nil:
			return o.Binary(args[0], args[1])
		case o.Function != nil:
			return o.Function(args...)
		}
		return types.NewErr("no such overload: %s", o.Operator)
	}
}

func (g *guarded) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return g.run(f, func(arg interpreter.InterpretableV2) ref.Val { return arg.Exec(f) })
}

func (g *guarded) Eval(a interpreter.Activation) ref.Val {
	return g.run(a, func(arg interpreter.InterpretableV2) ref.Val { return arg.Eval(a) })
}

// run evaluates the arguments once, charges for the output's size, then
// builds it.
func (g *guarded) run(a interpreter.Activation, eval func(interpreter.InterpretableV2) ref.Val) ref.Val {
	args := g.Args()
	vals := make([]ref.Val, len(args))
	for i, arg := range args {
		vals[i] = eval(arg)
		if types.IsUnknownOrError(vals[i]) {
			return vals[i]
		}
	}
	n, ok := g.call.bound(vals)
	if !ok {
		return types.NewErr("no such overload: %s", g.Function())
	}
	if m := meterOf(a); m != nil {
		m.charge(n)
	}
	return g.call.build(vals)
}

func replaceBound(args []ref.Val) (uint64, bool) {
	s, ok1 := args[0].(types.String)
	old, ok2 := args[1].(types.String)
	repl, ok3 := args[2].(types.String)
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	n := int64(-1)
	if len(args) == 4 {
		limit, ok := args[3].(types.Int)
		if !ok {
			return 0, false
		}
		n = int64(limit)
	}
	count := int64(utf8.RuneCountInString(string(s)) + 1)
	if old != "" {
		count = int64(strings.Count(string(s), string(old)))
	}
	if n >= 0 && n < count {
		count = n
	}
	return (uint64(len(s)) + uint64(count)*uint64(len(repl))) / bytesPerUnit, true
}

func joinBound(args []ref.Val) (uint64, bool) {
	l, ok := args[0].(traits.Lister)
	if !ok {
		return 0, false
	}
	size, ok := l.Size().(types.Int)
	if !ok {
		return 0, false
	}
	var sep uint64
	if len(args) == 2 {
		s, ok := args[1].(types.String)
		if !ok {
			return 0, false
		}
		sep = uint64(len(s))
	}
	total := uint64(size) * sep
	for i := types.Int(0); i < size; i++ {
		if s, ok := l.Get(i).(types.String); ok {
			total += uint64(len(s))
		}
	}
	return total / bytesPerUnit, true
}

func replaceBuild(args []ref.Val) ref.Val {
	s, old, repl := args[0].(types.String), args[1].(types.String), args[2].(types.String)
	n := -1
	if len(args) == 4 {
		n = int(args[3].(types.Int))
	}
	return types.String(strings.Replace(string(s), string(old), string(repl), n))
}

func joinBuild(args []ref.Val) ref.Val {
	l := args[0].(traits.Lister)
	sep := ""
	if len(args) == 2 {
		sep = string(args[1].(types.String))
	}
	size := l.Size().(types.Int)
	var sb strings.Builder
	for i := types.Int(0); i < size; i++ {
		if i != 0 {
			sb.WriteString(sep)
		}
		s, ok := l.Get(i).(types.String)
		if !ok {
			return types.NewErr("join: invalid input: %v", l.Get(i))
		}
		sb.WriteString(string(s))
	}
	return types.String(sb.String())
}

// lists returns the arguments as lists with their lengths.
func lists(args []ref.Val) ([]traits.Lister, []uint64, bool) {
	ls := make([]traits.Lister, 0, len(args))
	ns := make([]uint64, 0, len(args))
	for _, a := range args {
		l, ok := a.(traits.Lister)
		if !ok {
			return nil, nil, false
		}
		ls, ns = append(ls, l), append(ns, sizeOf(l.Size()))
	}
	return ls, ns, true
}

// mul multiplies, saturating.
func mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return ^uint64(0)
	}
	return lo
}

// flattenBound: the output has at most as many elements as the list has
// at every depth.
func flattenBound(args []ref.Val) (uint64, bool) {
	ls, _, ok := lists(args[:1])
	if !ok {
		return 0, false
	}
	if len(args) == 2 {
		if _, ok := args[1].(types.Int); !ok {
			return 0, false
		}
	}
	return deepSize(ls[0], ^uint64(0)), true
}

func flattenBuild(args []ref.Val) ref.Val {
	depth := int64(1)
	if len(args) == 2 {
		depth = int64(args[1].(types.Int))
	}
	if depth < 0 {
		return types.NewErr("level must be non-negative")
	}
	return types.DefaultTypeAdapter.NativeToValue(flatten(args[0].(traits.Lister), depth, nil))
}

func flatten(l traits.Lister, depth int64, out []ref.Val) []ref.Val {
	for it := l.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		if nested, ok := v.(traits.Lister); ok && depth > 0 {
			out = flatten(nested, depth-1, out)
			continue
		}
		out = append(out, v)
	}
	return out
}

// distinctBound: each element is compared with every element kept so
// far, each comparison walking at most the element.
func distinctBound(args []ref.Val) (uint64, bool) {
	ls, ns, ok := lists(args)
	if !ok {
		return 0, false
	}
	return mul(ns[0], deepSize(ls[0], ^uint64(0))), true
}

func distinctBuild(args []ref.Val) ref.Val {
	l := args[0].(traits.Lister)
	n := l.Size().(types.Int)
	kept := make([]ref.Val, 0, n)
	for i := types.Int(0); i < n; i++ {
		v := l.Get(i)
		seen := false
		for _, k := range kept {
			if v.Equal(k) == types.True {
				seen = true
				break
			}
		}
		if !seen {
			kept = append(kept, v)
		}
	}
	return types.DefaultTypeAdapter.NativeToValue(kept)
}

// containsBound: every element of the second list is looked for among
// the first's, a walk of the first list each.
func containsBound(args []ref.Val) (uint64, bool) {
	ls, ns, ok := lists(args)
	if !ok {
		return 0, false
	}
	return mul(ns[1], deepSize(ls[0], ^uint64(0))+ns[0]), true
}

// intersectsBound: every element of the first list is looked for among
// the second's.
func intersectsBound(args []ref.Val) (uint64, bool) {
	return containsBound([]ref.Val{args[1], args[0]})
}

func equivalentBound(args []ref.Val) (uint64, bool) {
	ab, ok := containsBound(args)
	if !ok {
		return 0, false
	}
	ba, _ := containsBound([]ref.Val{args[1], args[0]})
	if ab+ba < ab {
		return ^uint64(0), true
	}
	return ab + ba, true
}

func setsContains(args []ref.Val) ref.Val {
	l, sub := args[0].(traits.Lister), args[1].(traits.Lister)
	for it := sub.Iterator(); it.HasNext() == types.True; {
		if found := l.Contains(it.Next()); found != types.True {
			return found
		}
	}
	return types.True
}

func setsIntersects(args []ref.Val) ref.Val {
	a, b := args[0].(traits.Lister), args[1].(traits.Lister)
	for it := a.Iterator(); it.HasNext() == types.True; {
		if b.Contains(it.Next()) == types.True {
			return types.True
		}
	}
	return types.False
}

func setsEquivalent(args []ref.Val) ref.Val {
	if ab := setsContains(args); ab != types.True {
		return ab
	}
	return setsContains([]ref.Val{args[1], args[0]})
}

// formatFactor is how many times the size of their arguments format and
// strings.quote are charged: they allocate several times what they read.
const formatFactor = 8

func formatBound(args []ref.Val) (uint64, bool) {
	if len(args) != 2 {
		return 0, false
	}
	f, ok := args[0].(types.String)
	if !ok {
		return 0, false
	}
	return uint64(len(f))/bytesPerUnit + mul(formatFactor, deepSize(args[1], ^uint64(0))), true
}

func sortBound(args []ref.Val) (uint64, bool) {
	ls, ns, ok := lists(args[:1])
	if !ok {
		return 0, false
	}
	n := ns[0]
	return mul(n, uint64(bits.Len64(n))) + deepSize(ls[0], ^uint64(0)), true
}

func quoteBound(args []ref.Val) (uint64, bool) {
	if len(args) != 1 {
		return 0, false
	}
	s, ok := args[0].(types.String)
	if !ok {
		return 0, false
	}
	return mul(formatFactor, uint64(len(s))/bytesPerUnit), true
}

// runesBound charges for a string receiver's runes; other receivers (a
// list's reverse) cost what their node does.
func runesBound(args []ref.Val) (uint64, bool) {
	if s, ok := args[0].(types.String); ok {
		return uint64(len(s)) * 4 / bytesPerUnit, true
	}
	return 0, true
}

// searchBound adds a comparison per byte of the substring at every byte
// of the string.
func searchBound(args []ref.Val) (uint64, bool) {
	n, _ := runesBound(args)
	s, ok1 := args[0].(types.String)
	sub, ok2 := args[1].(types.String)
	if !ok1 || !ok2 {
		return n, true
	}
	return n + mul(uint64(len(s)), uint64(len(sub)))/bytesPerUnit, true
}

func matchBound(args []ref.Val) (uint64, bool) {
	if len(args) != 2 {
		return 0, true
	}
	s, ok1 := args[0].(types.String)
	re, ok2 := args[1].(types.String)
	if !ok1 || !ok2 {
		return 0, true
	}
	return mul(uint64(len(s)), uint64(len(re))+1) / 4, true
}
