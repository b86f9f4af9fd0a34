package definition

import (
	"fmt"
	"reflect"
	"testing"
)

const (
	sigA = `{ref: a, type: signal, with: {name: a}}`
	sigB = `{ref: b, type: signal, with: {name: b}}`
	sigC = `{ref: c, type: signal, with: {name: c}}`
)

func joinDoc(join string) string {
	return withEdges(one(sigA, sigB, sigC, `{ref: j, type: transform, with: {expr: '1'}, join: `+join+`}`),
		"{from: a, to: j}", "{from: b, to: j}", "{from: c, to: j}")
}

func TestControlFlowRules(t *testing.T) {
	t.Parallel()
	child := `{ref: loop, type: subworkflow, with: {workflow: child, repeat: %s}}`
	runRules(t, []ruleCase{
		{"partial join", joinDoc("{at_least: 2, cancel_rest: true}"), nil},
		{"race", joinDoc("{at_least: 1, cancel_rest: true}"), nil},
		{"at_least over the incoming edges", joinDoc("{at_least: 4}"),
			[]want{{"steps[3].join.at_least", "j", `4 exceeds the 3 incoming edges of step "j"`}}},
		{"at_least zero", joinDoc("{at_least: 0}"), []want{{"steps[3].join.at_least", "j", "must be between 1 and 5000, not 0"}}},
		{"at_least missing", joinDoc("{cancel_rest: true}"), []want{{"steps[3].join.at_least", "j", "is required"}}},
		{"join typo", joinDoc("{at_lest: 2}"), []want{
			{"steps[3].join.at_lest", "j", `unknown field "at_lest": did you mean "at_least"?`},
			{"steps[3].join.at_least", "j", "is required"},
		}},
		{"join word", joinDoc("some"), []want{{"steps[3].join", "j", `must be one of "all", "any", not "some"`}}},
		{"cancel_rest not a bool", joinDoc("{at_least: 2, cancel_rest: yes please}"),
			[]want{{"steps[3].join.cancel_rest", "j", "must be true or false"}}},
		{"end_run", withEdges(one(taskA, `{ref: fin, type: transform, with: {expr: '1'}, end_run: succeeded}`, `{ref: e, type: transform, with: {expr: '1'}}`),
			"{from: a, to: fin}", "{from: fin, to: e, on: error}", "{from: fin, to: e, on: done}"), nil},
		{"end_run bad", one(`{ref: a, type: task, with: {handler: h}, end_run: cancelled}`),
			[]want{{"steps[0].end_run", "a", `must be one of "succeeded", "failed", not "cancelled"`}}},
		{"end_run with a success edge", withEdges(one(`{ref: a, type: task, with: {handler: h}, end_run: failed}`, `{ref: b, type: transform, with: {expr: '1'}}`),
			"{from: a, to: b}"),
			[]want{{"steps[0].end_run", "a", `its edge to "b" on success never fires`}}},
		{"complete_when", one(`{ref: s, type: scatter, with: {items_expr: '[1, 2]', do: {type: transform, with: {expr: item}}, complete_when: 'succeeded >= 1 || results.exists(r, r.state == "failed")'}}`), nil},
		{"complete_when child_workflow", one(`{ref: s, type: scatter, with: {items_expr: '[1, 2]', mode: child_workflow, workflow: child, complete_when: 'done * 2 >= total'}}`), nil},
		{"complete_when not bool", one(`{ref: s, type: scatter, with: {items_expr: '[1, 2]', do: {type: transform, with: {expr: item}}, complete_when: 'succeeded'}}`),
			[]want{{"steps[0].with.complete_when", "s", "must evaluate to bool, not int"}}},
		{"complete_when reads output", one(`{ref: s, type: scatter, with: {items_expr: '[1, 2]', do: {type: transform, with: {expr: item}}, complete_when: 'output == 1'}}`),
			[]want{{"steps[0].with.complete_when", "s", `"output" is only available in a repeating subworkflow's expressions`}}},
		{"progress outside complete_when", one(`{ref: a, type: transform, with: {expr: 'succeeded + 1'}}`),
			[]want{{"steps[0].with.expr", "a", `"succeeded" is only available in a scatter's complete_when`}}},
		{"repeat", one(fmt.Sprintf(child, `{until_expr: 'output.done || iteration >= 3', input_expr: '{"page": output.next}', max_iterations: 50}`)), nil},
		{"repeat reads the loop in input_expr", one(`{ref: loop, type: subworkflow, with: {workflow: child, input_expr: '{"n": iteration}', repeat: {until_expr: 'true', max_iterations: 2}}}`), nil},
		{"loop variables without repeat", one(`{ref: loop, type: subworkflow, with: {workflow: child, input_expr: '{"n": iteration}'}}`),
			[]want{{"steps[0].with.input_expr", "loop", `"iteration" is only available in a repeating subworkflow's expressions`}}},
		{"repeat without until or max", one(fmt.Sprintf(child, `{input_expr: 'output'}`)), []want{
			{"steps[0].with.repeat.until_expr", "loop", "is required"},
			{"steps[0].with.repeat.max_iterations", "loop", "is required: at most 10000"},
		}},
		{"repeat too many", one(fmt.Sprintf(child, `{until_expr: 'true', max_iterations: 10001}`)),
			[]want{{"steps[0].with.repeat.max_iterations", "loop", "must be between 1 and 10000, not 10001"}}},
		{"repeat async", one(`{ref: loop, type: subworkflow, with: {workflow: child, mode: async, repeat: {until_expr: 'true', max_iterations: 2}}}`),
			[]want{{"steps[0].with.repeat", "loop", "applies only in sync mode"}}},
		{"repeat on a checkpoint", one(`{ref: loop, type: subworkflow, with: {workflow: child, wait_for: 'checkpoint:x', repeat: {until_expr: 'true', max_iterations: 2}}}`),
			[]want{{"steps[0].with.repeat", "loop", "needs wait_for: terminal"}}},
		{"repeat until not bool", one(fmt.Sprintf(child, `{until_expr: 'iteration', max_iterations: 2, times: 3}`)), []want{
			{"steps[0].with.repeat.times", "loop", `unknown field "times"`},
			{"steps[0].with.repeat.until_expr", "loop", "must evaluate to bool, not int"},
		}},
	})
}

func TestJoinNormalises(t *testing.T) {
	t.Parallel()
	anyJoin := mustCompile(t, joinDoc("any"))
	atLeastOne := mustCompile(t, joinDoc("{at_least: 1}"))
	if anyJoin.Hash != atLeastOne.Hash {
		t.Errorf("join any and {at_least: 1} hash differently")
	}
	c := mustCompile(t, joinDoc("{at_least: 2, cancel_rest: true}"))
	j, _ := c.Manifest.Step("j")
	if j.Join != JoinAtLeast || j.JoinAtLeast != 2 || !j.JoinCancelRest || j.JoinNeed(3) != 2 {
		t.Errorf("join = %q %d %v", j.Join, j.JoinAtLeast, j.JoinCancelRest)
	}
	race, _ := mustCompile(t, joinDoc("{at_least: 1, cancel_rest: true}")).Manifest.Step("j")
	if race.Join != JoinAny || !race.JoinCancelRest || race.JoinNeed(3) != 1 {
		t.Errorf("race join = %q %v", race.Join, race.JoinCancelRest)
	}
	loop, _ := mustCompile(t, one(`{ref: l, type: subworkflow, with: {workflow: c, repeat: {until_expr: 'true', max_iterations: 5}}}`)).Manifest.Step("l")
	if want := map[string]any{"until_expr": "true", "max_iterations": int64(5)}; !reflect.DeepEqual(loop.With["repeat"], want) {
		t.Errorf("repeat = %#v", loop.With["repeat"])
	}
}

func TestDefinitionJoinsFromGo(t *testing.T) {
	t.Parallel()
	d := &Definition{Key: "race", Steps: []StepDef{
		Signal("a", "a"), Signal("b", "b"),
		{Ref: "won", Type: TypeTransform, With: With{"expr": "1"}, Join: AtLeast{N: 1, CancelRest: true}, EndRun: EndSucceeded},
	}, Edges: []EdgeDef{Then("a", "won"), Then("b", "won")}}
	comp, err := NewCompiler(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, err := comp.CompileDefinition(d)
	if err != nil {
		t.Fatal(err)
	}
	won, _ := c.Manifest.Step("won")
	if won.Join != JoinAny || !won.JoinCancelRest || won.EndRun != EndSucceeded {
		t.Errorf("won = %+v", won)
	}
}
