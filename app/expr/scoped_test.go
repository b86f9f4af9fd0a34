package expr

import (
	"context"
	"reflect"
	"testing"
)

func TestScopedVariables(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for _, tc := range []struct {
		src  string
		vars Vars
		want any
	}{
		{"succeeded >= 2 && failed == 0", Vars{Progress: &Progress{Succeeded: 2, Done: 2, Total: 5}}, true},
		{"done * 2 >= total", Vars{Progress: &Progress{Succeeded: 1, Failed: 2, Done: 3, Total: 6}}, true},
		{"results.exists(r, r.output.hit)", Vars{Progress: &Progress{Results: []any{
			map[string]any{"key": "0", "state": "succeeded", "output": map[string]any{"hit": true}},
		}}}, true},
		{"size(results) == 0 && succeeded == 0", Vars{}, true},
		{"output.page + 1", Vars{Loop: &Loop{Output: map[string]any{"page": int64(3)}, Iteration: 3}}, int64(4)},
		{"iteration == 0 && output == null", Vars{}, true},
	} {
		p, err := env.Compile(tc.src, KindAny)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		got, err := p.Eval(context.Background(), tc.vars)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %#v, %v; want %#v", tc.src, got, err, tc.want)
		}
	}
}

func TestProgramUses(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	for src, want := range map[string][]string{
		"output.done && iteration > 2":    {VarOutput, VarIteration},
		"results.size() > 0 || done == 3": {VarDone, VarResults},
		`input.done && steps.a.output`:    nil,
		"[1].exists(x, x == total)":       {VarTotal},
	} {
		p, err := env.Compile(src, KindAny)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := p.Uses(append(ProgressVars, LoopVars...)...); !reflect.DeepEqual(got, want) {
			t.Errorf("%s uses %v, want %v", src, got, want)
		}
	}
}
