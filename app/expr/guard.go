package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// Guarded calls: functions whose output can be far larger than their
// inputs, so that charging for the result after it is built would come
// too late (`s.replace("", s)` squares a string's length, and
// `list.join(sep)` multiplies a separator by a list's length). A guarded
// node evaluates the arguments itself, charges the meter for the output's
// size, and only then builds it, the way cel-go's strings extension does.

// outputBound returns the size in bytes of a call's output, or false when
// the arguments are not of the overload's types.
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
}

type guarded struct {
	interpreter.InterpretableCall
	call guardedCall
}

func guard(c interpreter.InterpretableCall) interpreter.InterpretableV2 {
	call, ok := guardedCalls[c.OverloadID()]
	if !ok {
		return nil
	}
	return &guarded{InterpretableCall: c, call: call}
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
		m.charge(n / bytesPerUnit)
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
	return uint64(len(s)) + uint64(count)*uint64(len(repl)), true
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
	return total, true
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
