package definition

import (
	"fmt"
	"strings"
	"testing"
)

const taskA = `{ref: a, type: task, with: {handler: h}}`

func TestDocumentRules(t *testing.T) {
	t.Parallel()
	runRules(t, []ruleCase{
		{"minimal", one(taskA), nil},
		{"not an object", "[1, 2]", []want{{"", "", "must be an object, not a list"}}},
		{"no key, no steps", "name: x\n", []want{{"key", "", "is required"}, {"steps", "", "is required"}}},
		{"empty steps", "key: k\nsteps: []\n", []want{{"steps", "", "at least one step"}}},
		{"steps not a list", "key: k\nsteps: {a: 1}\n", []want{{"steps", "", "must be a list, not an object"}}},
		{"bad key", strings.Replace(one(taskA), "key: k", "key: Order_Fulfil!", 1),
			[]want{{"key", "", `must match [a-z0-9][a-z0-9-_]{0,62}, not "Order_Fulfil!"`}}},
		{"long key", strings.Replace(one(taskA), "key: k", "key: "+strings.Repeat("k", 64), 1),
			[]want{{"key", "", "must match"}}},
		{"unknown top-level field", one(taskA) + "stepz: []\n",
			[]want{{"stepz", "", `unknown field "stepz": did you mean "steps"?`}}},
		{"key not a string", strings.Replace(one(taskA), "key: k", "key: 12", 1),
			[]want{{"key", "", "must be a string, not a number"}}},
		{"timeout", one(taskA) + "timeout: P3D\n", nil},
		{"bad timeout", one(taskA) + "timeout: 3 days\n", []want{{"timeout", "", "invalid duration"}}},
		{"output_expr", one(taskA) + "output_expr: 'steps.a.output'\n", nil},
		{"bad output_expr", one(taskA) + "output_expr: 'steps.a.output +'\n", []want{{"output_expr", "", "invalid expression"}}},
		{"input_schema", one(taskA) + "input_schema: {type: object, properties: {n: {type: integer, minimum: 1}}}\n", nil},
		{"bad input_schema", one(taskA) + "input_schema: {type: objekt}\n", []want{{"input_schema", "", "invalid JSON Schema"}}},
		{"remote schema refused", one(taskA) + "input_schema: {$ref: 'file:///etc/passwd'}\n", []want{{"input_schema", "", "invalid JSON Schema"}}},
	})
}

func TestStepRules(t *testing.T) {
	t.Parallel()
	runRules(t, []ruleCase{
		{"missing ref and type", one(`{with: {handler: h}}`),
			[]want{{"steps[0].ref", "", "is required"}, {"steps[0].type", "", "is required"}}},
		{"bad ref", one(`{ref: Charge-1, type: task, with: {handler: h}}`),
			[]want{{"steps[0].ref", "Charge-1", "must match [a-z][a-z0-9_]{0,62}"}}},
		{"duplicate ref", one(taskA, `{ref: b, type: task, with: {handler: h}}`, taskA),
			[]want{{"steps[2].ref", "a", `duplicate ref "a" (also steps[0])`}}},
		{"unknown step field", one(`{ref: a, type: task, with: {handler: h}, run_iff: "true"}`),
			[]want{{"steps[0].run_iff", "a", `unknown field "run_iff": did you mean "run_if"?`}}},
		{"unknown with field", one(`{ref: a, type: task, with: {handler: h, handlr: x, color: red}}`),
			[]want{
				{"steps[0].with.color", "a", `unknown field "color"`},
				{"steps[0].with.handlr", "a", `unknown field "handlr": did you mean "handler"?`},
			}},
		{"with not an object", one(`{ref: a, type: task, with: [1]}`),
			[]want{{"steps[0].with", "a", "must be an object"}}},
		{"step not an object", one(`just-a-string`),
			[]want{{"steps[0]", "", "must be an object, not a string"}}},
		{"unknown type", one(`{ref: a, type: frobnicate}`),
			[]want{{"steps[0].type", "a", `unknown step type "frobnicate": expected one of task, http,`}}},
		{"wrong case", one(`{ref: a, type: Task, with: {handler: h}}`),
			[]want{{"steps[0].type", "a", `unknown step type "Task": did you mean "task"?`}}},
		{"typo", one(`{ref: a, type: trasnform, with: {expr: "1"}}`),
			[]want{{"steps[0].type", "a", `did you mean "transform"?`}}},
		{"join and on_error", one(`{ref: a, type: task, with: {handler: h}, join: any, on_error: continue}`), nil},
		{"bad join and on_error", one(`{ref: a, type: task, with: {handler: h}, join: some, on_error: ignore}`),
			[]want{
				{"steps[0].join", "a", `must be one of "all", "any", not "some"`},
				{"steps[0].on_error", "a", `must be one of "fail", "continue", not "ignore"`},
			}},
		{"run_if", one(`{ref: a, type: task, with: {handler: h}, run_if: "input.go"}`), nil},
		{"run_if not bool", one(`{ref: a, type: task, with: {handler: h}, run_if: '"yes"'}`),
			[]want{{"steps[0].run_if", "a", "must evaluate to bool"}}},
		{"for_each", one(`{ref: a, type: task, with: {handler: h, input_expr: item}, for_each: input.xs}`,
			`{ref: b, type: http, with: {url_expr: item}, for_each: input.xs}`, `{ref: c, type: transform, with: {expr: "item * 2.0"}, for_each: input.xs}`), nil},
		{"for_each on another type", one(`{ref: a, type: wait, with: {duration: 1s}, for_each: input.xs}`),
			[]want{{"steps[0].for_each", "a", "only to task, http and transform steps, not wait"}}},
		{"for_each not a list", one(`{ref: a, type: task, with: {handler: h}, for_each: "1"}`),
			[]want{{"steps[0].for_each", "a", "must evaluate to list"}}},
		{"retry and timeout", one(`{ref: a, type: task, with: {handler: h}, retry: {max_attempts: 10, initial_interval: 500ms, backoff_coefficient: 1.5, max_interval: PT10M, jitter: false}, timeout: 2m}`), nil},
		{"bad retry", one(`{ref: a, type: http, with: {url: "https://x.test"}, retry: {max_attempts: 0, initial_interval: 1m, max_interval: 1s, backoff_coefficient: 0.5, jitter: maybe, wait: 1}}`),
			[]want{
				{"steps[0].retry.wait", "a", `unknown field "wait"`},
				{"steps[0].retry.max_attempts", "a", "between 1 and 100, not 0"},
				{"steps[0].retry.backoff_coefficient", "a", "from 1 to 100, not 0.5"},
				{"steps[0].retry.jitter", "a", "must be true or false"},
				{"steps[0].retry.max_interval", "a", "must not be shorter than initial_interval"},
			}},
		{"retry on a parking step", one(`{ref: a, type: signal, with: {name: x}, retry: {max_attempts: 2}, timeout: 1m}`),
			[]want{
				{"steps[0].retry", "a", "retry applies only to task and http steps"},
				{"steps[0].timeout", "a", "timeout applies only to task and http steps"},
			}},
		{"all problems at once", one(`{ref: a, type: task}`, `{ref: b, type: sleep, with: {duration: 1s}}`, `{ref: c, type: condition, with: {expr: "1"}}`),
			[]want{
				{"steps[0].with.handler", "a", "is required"},
				{"steps[1].type", "b", `unknown step type "sleep": did you mean "wait"?`},
				{"steps[2].with.expr", "c", "must evaluate to bool"},
			}},
	})
}

// Every alias the contract names is refused with its canonical type.
func TestAliasesNameCanonicalType(t *testing.T) {
	t.Parallel()
	aliasesOf := map[StepType][]string{
		TypeWait:        {"sleep", "delay", "timer"},
		TypeCondition:   {"if", "branch", "switch"},
		TypeScatter:     {"map", "foreach", "fan_out", "parallel"},
		TypeGather:      {"join", "reduce", "fan_in"},
		TypeSubworkflow: {"child", "sub_workflow", "workflow"},
		TypeHTTP:        {"http_request", "request", "webhook"},
		TypeTransform:   {"script", "expr", "set"},
		TypeHumanLoop:   {"human", "manual", "case"},
		TypeApproval:    {"approve"},
		TypeEvent:       {"wait_for_event"},
		TypeTask:        {"activity", "job", "worker"},
	}
	for canonical, names := range aliasesOf {
		for _, a := range names {
			_, err := compileDoc(t, one(`{ref: a, type: `+a+`}`))
			assertProblems(t, err, []want{{"steps[0].type", "a", fmt.Sprintf("unknown step type %q: did you mean %q?", a, canonical)}})
		}
	}
}

func TestEdgeRules(t *testing.T) {
	t.Parallel()
	cond := `{ref: c, type: condition, with: {expr: "input.ok"}}`
	req := `{ref: r, type: http, with: {url: "https://x.test"}}`
	appr := `{ref: p, type: approval, with: {approvers: ["role:boss"]}}`
	b := `{ref: b, type: task, with: {handler: h}}`
	d := `{ref: d, type: task, with: {handler: h}}`
	runRules(t, []ruleCase{
		{"outcomes per type", withEdges(one(cond, req, appr, b, d),
			`{from: c, to: r, on: "true"}`, `{from: c, to: b, on: false}`, `{from: c, to: d, on: error}`,
			`{from: r, to: p}`, `{from: r, to: b, on: done}`, `{from: p, to: d, on: approved}`, `{from: p, to: b, on: rejected}`), nil},
		{"outcome the source cannot produce", withEdges(one(req, b, cond, appr), `{from: r, to: b, on: "true"}`,
			`{from: c, to: b}`, `{from: p, to: b, on: success}`, `{from: r, to: p, on: maybe}`),
			[]want{
				{"edges[0].on", "r", `a http step never ends with "true"`},
				{"edges[1].on", "c", `a condition step never ends with "success"`},
				{"edges[2].on", "p", `a approval step never ends with "success"`},
				{"edges[3].on", "r", `unknown outcome "maybe"`},
			}},
		{"unknown endpoints", withEdges(one(taskA), `{from: a, to: z}`, `{from: y, to: a}`, `{to: a}`),
			[]want{
				{"edges[0].to", "a", `unknown step "z"`},
				{"edges[1].from", "y", `unknown step "y"`},
				{"edges[2].from", "", "is required"},
			}},
		{"self-loop", withEdges(one(taskA), `{from: a, to: a, on: error}`),
			[]want{{"edges[0].to", "a", "self-loop"}}},
		{"duplicate edge", withEdges(one(taskA, b), `{from: a, to: b}`, `{from: a, to: b, on: success}`),
			[]want{{"edges[1].to", "a", "duplicate edge a → b on success (also edges[0])"}}},
		{"unknown edge field", withEdges(one(taskA, b), `{from: a, to: b, when: x}`),
			[]want{{"edges[0].when", "a", `unknown field "when"`}}},
		{"choice group", withEdges(one(taskA, b, d), `{from: a, choice: [{when: "input.x", to: b}, {default: true, to: d}]}`), nil},
		{"choice without default", withEdges(one(taskA, b, d), `{from: a, choice: [{when: "input.x", to: b}, {when: "input.y", to: d}]}`),
			[]want{{"edges[0].choice", "a", "exactly one default branch (default: true), found 0"}}},
		{"choice with two defaults", withEdges(one(taskA, b, d), `{from: a, choice: [{default: true, to: b}, {default: true, to: d}]}`),
			[]want{
				{"edges[0].choice[0].default", "a", "must come last"},
				{"edges[0].choice", "a", "found 2"},
			}},
		{"choice branch rules", withEdges(one(taskA, b, d), `{from: a, choice: [{to: b}, {when: "1", to: d}, {when: x, default: true, to: d}]}`),
			[]want{
				{"edges[0].choice[0].when", "a", "is required (or default: true)"},
				{"edges[0].choice[1].when", "a", "must evaluate to bool"},
				{"edges[0].choice[2].when", "a", "a default branch has no condition"},
				{"edges[0].choice[2].to", "a", "duplicate edge a → d on success (also edges[0].choice[1])"},
			}},
		{"two choice groups", withEdges(one(taskA, b, d), `{from: a, choice: [{default: true, to: b}]}`, `{from: a, choice: [{default: true, to: d}]}`),
			[]want{{"edges[1].choice", "a", `step "a" already has a choice group (edges[0])`}}},
		{"choice from a condition", withEdges(one(cond, b), `{from: c, choice: [{default: true, to: b}]}`),
			[]want{{"edges[0].choice", "c", `a condition step never ends with "success"`}}},
		{"empty choice", withEdges(one(taskA, b), `{from: a, choice: []}`),
			[]want{{"edges[0].choice", "a", "needs branches"}}},
	})
}

func TestGraphRules(t *testing.T) {
	t.Parallel()
	steps := func(refs ...string) []string {
		out := make([]string, len(refs))
		for i, r := range refs {
			out[i] = `{ref: ` + r + `, type: task, with: {handler: h}}`
		}
		return out
	}
	runRules(t, []ruleCase{
		{"cycle", withEdges(one(steps("a", "b", "c", "d")...), `{from: a, to: b}`, `{from: b, to: c}`, `{from: c, to: a, on: error}`, `{from: c, to: d}`),
			[]want{{"edges", "a", "cycle through steps a, b, c"}}},
		{"two cycles", withEdges(one(steps("a", "b", "x", "y")...), `{from: b, to: a}`, `{from: a, to: b}`, `{from: y, to: x}`, `{from: x, to: y}`),
			[]want{{"edges", "a", "cycle through steps a, b"}, {"edges", "x", "cycle through steps x, y"}}},
		{"gather not below its scatter", withEdges(one(scatterStep("sc"), `{ref: g, type: gather, with: {scatter_ref: sc}}`, taskA), `{from: a, to: g}`),
			[]want{{"steps[1].with.scatter_ref", "g", `scatter "sc" must be an ancestor of gather "g"`}}},
		{"gather below its scatter through steps", withEdges(one(scatterStep("sc"), `{ref: g, type: gather, with: {scatter_ref: sc}}`, taskA), `{from: sc, to: a, on: done}`, `{from: a, to: g}`), nil},
		{"gather of an unknown step", one(`{ref: g, type: gather, with: {scatter_ref: nope}}`),
			[]want{{"steps[0].with.scatter_ref", "g", `unknown step "nope"`}}},
	})
}

func TestLimitRules(t *testing.T) {
	t.Parallel()
	runRules(t, []ruleCase{
		{"limits", one(taskA) + "limits: {max_inline_children: 1000, transitions_soft: 100, transitions_hard: 200, transitions_terminate: 300}\n", nil},
		{"bad limits", one(taskA) + "limits: {max_inline_children: 20000, transitions_soft: 300, transitions_hard: 200, transitions_x: 1}\n",
			[]want{
				{"limits.transitions_x", "", "unknown field"},
				{"limits.max_inline_children", "", "between 1 and 10000"},
				{"limits", "", "soft ≤ hard ≤ terminate"},
			}},
		{"too many steps", manySteps(MaxSteps + 1), []want{{"steps", "", "at most 1000 steps, found 1001"}}},
		{"as many steps as allowed", manySteps(MaxSteps), nil},
	})
}

func manySteps(n int) string {
	var b strings.Builder
	b.WriteString("key: k\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {ref: s%d, type: task, with: {handler: h}}\n", i)
	}
	return b.String()
}

func TestTooManyEdges(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(manySteps(200) + "edges:\n")
	n := 0
	for i := 0; i < 200 && n <= MaxEdges; i++ {
		for j := i + 1; j < 200 && n <= MaxEdges; j++ {
			fmt.Fprintf(&b, "  - {from: s%d, to: s%d}\n", i, j)
			n++
		}
	}
	_, err := compileDoc(t, b.String())
	assertProblems(t, err, []want{{"edges", "", "at most 5000 edges, found 5001"}})
}

func TestLimitsClampedToServerMaxima(t *testing.T) {
	t.Parallel()
	opts := DefaultOptions()
	opts.MaxInlineChildren, opts.TransitionsSoft, opts.TransitionsHard, opts.TransitionsTerminate = 100, 10, 20, 30
	c, err := NewCompiler(opts)
	if err != nil {
		t.Fatal(err)
	}
	doc := one(`{ref: s, type: scatter, with: {items_expr: "input.xs", max_inline_children: 5000, do: {type: task, with: {handler: h}}}}`) +
		"limits: {max_inline_children: 9000, transitions_soft: 5, transitions_hard: 99999}\n"
	got, err := c.Compile([]byte(doc), FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MaxInlineChildren: 100, TransitionsSoft: 5, TransitionsHard: 20, TransitionsTerminate: 30}
	if got.Manifest.Limits != want {
		t.Errorf("Limits = %+v, want %+v", got.Manifest.Limits, want)
	}
	if n := got.Manifest.Steps[0].With["max_inline_children"]; n != int64(100) {
		t.Errorf("scatter max_inline_children = %v, want 100", n)
	}
	if _, err := NewCompiler(Options{MaxInlineChildren: 20000, TransitionsSoft: 1, TransitionsHard: 1, TransitionsTerminate: 1}); err == nil {
		t.Error("NewCompiler accepted a maximum over the hard cap")
	}
}
