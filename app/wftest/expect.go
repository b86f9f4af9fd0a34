package wftest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
)

// Check compares an outcome with an expectation and returns one line per
// difference (an output's as a line diff of its JSON); none means the
// case passed.
func (r *Runner) Check(ctx context.Context, o *Outcome, e *Expect) []string {
	if e == nil {
		return []string{"no expect: run with --update to record the outcome"}
	}
	var out []string
	if e.Status != "" && e.Status != o.Status {
		out = append(out, fmt.Sprintf("status: got %s, want %s%s", o.Status, e.Status, o.errorNote()))
	}
	if e.Output != nil && !sameJSON(e.Output, o.Output) {
		out = append(out, "output differs (-want +got):\n"+Diff(pretty(e.Output), pretty(o.Output)))
	}
	if e.Error != "" && (o.Error == nil || o.Error.Code != e.Error) {
		out = append(out, fmt.Sprintf("error: got %s, want %s", o.errorCode(), e.Error))
	}
	out = append(out, mapDiff("nodes", e.Nodes, o.Nodes)...)
	out = append(out, mapDiff("attempts", e.Attempts, o.Attempts)...)
	if miss := subsequence(e.Order, o.Ended); miss != "" {
		out = append(out, fmt.Sprintf("order: %q not found in order after the entries before it; ended: %s", miss, strings.Join(o.Ended, ", ")))
	}
	if e.Duration != "" && e.Duration != o.Duration {
		out = append(out, fmt.Sprintf("duration: got %s, want %s", o.Duration, e.Duration))
	}
	return append(out, r.asserts(ctx, o, e.Assert)...)
}

func (o *Outcome) errorCode() string {
	if o.Error == nil {
		return "none"
	}
	return o.Error.Code
}

func (o *Outcome) errorNote() string {
	switch {
	case o.Error != nil:
		return fmt.Sprintf(" (error %s on %s: %s)", o.Error.Code, o.Error.Node, o.Error.Message)
	case o.Stuck:
		return " (nothing left to wake the run: a missing delivery?)"
	}
	return ""
}

func mapDiff[V comparable](field string, want, got map[string]V) []string {
	var out []string
	for _, k := range sortedKeys(want) {
		g, ok := got[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s.%s: no such node, want %v", field, k, want[k]))
		case g != want[k]:
			out = append(out, fmt.Sprintf("%s.%s: got %v, want %v", field, k, g, want[k]))
		}
	}
	return out
}

// subsequence returns the first entry of want not found, in order, in
// got; an entry without a state matches the node ending in any.
func subsequence(want, got []string) string {
	i := 0
	for _, w := range want {
		for i < len(got) && got[i] != w && strings.Fields(got[i])[0] != w {
			i++
		}
		if i == len(got) {
			return w
		}
		i++
	}
	return ""
}

// asserts evaluates each CEL assertion over the final state.
func (r *Runner) asserts(ctx context.Context, o *Outcome, srcs []string) []string {
	var out []string
	v := finalVars(o)
	for _, src := range srcs {
		prg, err := r.cache.Get(src, expr.KindBool)
		if err != nil {
			out = append(out, fmt.Sprintf("assert %s: %v", src, err))
			continue
		}
		ok, err := prg.EvalBool(ctx, v)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("assert %s: %v", src, err))
		case !ok:
			out = append(out, fmt.Sprintf("assert %s: false", src))
		}
	}
	return out
}

// finalVars are the assertions' variables: input, steps as a step's own
// expressions see them, and run with its status, output and error.
func finalVars(o *Outcome) expr.Vars {
	st := o.state
	steps := map[string]any{}
	for _, s := range o.manifest.Steps {
		if n := st.Nodes[s.Ref]; n != nil && n.State.Terminal() {
			steps[s.Ref] = stepVar(n)
		}
	}
	run := map[string]any{}
	for k, v := range st.Run.Meta {
		run[k] = v
	}
	run["status"], run["output"], run["error"] = string(st.Run.Status), st.Run.Output, errVar(st.Run.Error)
	return expr.Vars{Input: st.Run.Input, Steps: steps, Run: run}
}

func stepVar(n *engine.Node) map[string]any {
	return map[string]any{"output": n.Output, "state": string(n.State), "error": errVar(n.Error), "attempts": int64(n.Attempt)}
}

func errVar(e *engine.Error) any {
	if e == nil {
		return nil
	}
	return map[string]any{"code": e.Code, "message": e.Message}
}

func sameJSON(a, b any) bool {
	na, err1 := jsonvalue.Normalize(a)
	nb, err2 := jsonvalue.Normalize(b)
	return err1 == nil && err2 == nil && reflect.DeepEqual(na, nb)
}

func pretty(v any) string {
	b, err := jsonvalue.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return indentJSON(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Diff is a line diff of two texts, want lines prefixed -, got lines +.
func Diff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || !slices.Contains(a[i:], b[j])):
			out = append(out, "+ "+b[j])
			j++
		default:
			out = append(out, "- "+a[i])
			i++
		}
	}
	return strings.Join(out, "\n")
}
