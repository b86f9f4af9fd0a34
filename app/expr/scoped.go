package expr

import (
	"slices"

	"github.com/google/cel-go/cel"
)

// Variables only some fields see. They are declared in the one
// environment, like item and event, so a program compiles once whatever
// field it sits in; the compiler (package definition) refuses them, with
// [Program.Uses], in fields that do not provide them, and they keep their
// zero values wherever they do not apply.
const (
	// A scatter's complete_when sees its children's progress.
	VarSucceeded = "succeeded"
	VarFailed    = "failed"
	VarDone      = "done"
	VarTotal     = "total"
	VarResults   = "results"
	// A repeating subworkflow's expressions see the loop.
	VarOutput    = "output"
	VarIteration = "iteration"
)

// ProgressVars are the scatter variables, LoopVars the loop variables.
var (
	ProgressVars = []string{VarSucceeded, VarFailed, VarDone, VarTotal, VarResults}
	LoopVars     = []string{VarOutput, VarIteration}
)

// Progress is a scatter's progress as complete_when sees it: children
// succeeded, failed, finished (the two together) and in all, and the
// outcomes of the finished ones in item order ({key, state, output,
// error}).
type Progress struct {
	Succeeded, Failed, Done, Total int
	Results                        []any
}

// Loop is a repeating subworkflow as its expressions see it: the
// iterations finished so far and the last one's output (null before the
// first).
type Loop struct {
	Output    any
	Iteration int
}

func scopedOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Variable(VarSucceeded, cel.IntType),
		cel.Variable(VarFailed, cel.IntType),
		cel.Variable(VarDone, cel.IntType),
		cel.Variable(VarTotal, cel.IntType),
		cel.Variable(VarResults, cel.ListType(cel.DynType)),
		cel.Variable(VarOutput, cel.DynType),
		cel.Variable(VarIteration, cel.IntType),
	}
}

// scoped resolves the scoped variables from v.
func (v *Vars) scoped(name string) (any, bool) {
	p, l := v.Progress, v.Loop
	if p == nil {
		p = &Progress{}
	}
	if l == nil {
		l = &Loop{}
	}
	switch name {
	case VarSucceeded:
		return p.Succeeded, true
	case VarFailed:
		return p.Failed, true
	case VarDone:
		return p.Done, true
	case VarTotal:
		return p.Total, true
	case VarResults:
		if p.Results == nil {
			return []any{}, true
		}
		return p.Results, true
	case VarOutput:
		return l.Output, true
	case VarIteration:
		return l.Iteration, true
	}
	return nil, false
}

// Uses returns which of names the program reads as variables, in the
// order given.
func (p *Program) Uses(names ...string) []string {
	var used []string
	for _, r := range p.ast.NativeRep().ReferenceMap() {
		if len(r.OverloadIDs) == 0 && slices.Contains(names, r.Name) && !slices.Contains(used, r.Name) {
			used = append(used, r.Name)
		}
	}
	slices.SortFunc(used, func(a, b string) int { return slices.Index(names, a) - slices.Index(names, b) })
	return used
}
