package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/definition"
)

// graphCase drives a manifest through ticks of inputs and checks where
// the run and its nodes end.
type graphCase struct {
	name     string
	manifest string
	input    any
	ticks    [][]Input
	run      RunStatus
	nodes    map[string]NodeState
	output   string // JSON of the run output, checked when set
}

func ok(node string, attempt int, out any) Input {
	return StepResult{Node: node, Attempt: attempt, Output: out}
}

func failed(node string, attempt int, code string, retryable bool) Input {
	return StepResult{Node: node, Attempt: attempt, Error: &Error{Code: code, Retryable: retryable}}
}

func runGraphCases(t *testing.T, cases []graphCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := parseManifest(tc.manifest)
			if err != nil {
				t.Fatal(err)
			}
			s := newSim(t, m, tc.input)
			s.tick(t0, 1)
			for i, ins := range tc.ticks {
				s.tick(t0.Add(time.Duration(i+1)*time.Second), uint64(i), ins...)
			}
			if s.run.Status != tc.run {
				t.Errorf("run = %s, want %s (error %+v)", s.run.Status, tc.run, s.run.Error)
			}
			for id, want := range tc.nodes {
				if got := s.nodes[id]; got == nil || got.State != want {
					t.Errorf("node %s = %v, want %s", id, stateOf(got), want)
				}
			}
			if tc.output != "" {
				if got := js(s.run.Output); got != tc.output {
					t.Errorf("output = %s, want %s", got, tc.output)
				}
			}
		})
	}
}

func stateOf(n *Node) any {
	if n == nil {
		return "<none>"
	}
	return n.State
}

func TestEdgeKinds(t *testing.T) {
	t.Parallel()
	runGraphCases(t, []graphCase{
		{
			name:     "success fires, error dies",
			manifest: "step a task\nstep s transform expr=`1`\nstep e transform expr=`2`\nedge a s\nedge a e on=error",
			ticks:    [][]Input{{ok("a", 1, nil)}},
			run:      RunSucceeded, nodes: map[string]NodeState{"s": NodeSucceeded, "e": NodeSkipped},
		},
		{
			name:     "error fires under continue, success dies",
			manifest: "step a task retry=1 on_error=continue\nstep s transform expr=`1`\nstep e transform expr=`2`\nedge a s\nedge a e on=error",
			ticks:    [][]Input{{failed("a", 1, "x", false)}},
			run:      RunSucceeded, nodes: map[string]NodeState{"a": NodeFailed, "s": NodeSkipped, "e": NodeSucceeded},
			output: `{"e":2}`,
		},
		{
			name:     "true and false",
			manifest: "step c condition expr=`input.v`\nstep t transform expr=`1`\nstep f transform expr=`2`\nedge c t on=true\nedge c f on=false",
			input:    map[string]any{"v": false},
			run:      RunSucceeded, nodes: map[string]NodeState{"t": NodeSkipped, "f": NodeSucceeded},
		},
		{
			name:     "approved and rejected",
			manifest: "step ap approval approvers=[\"x\"]\nstep y transform expr=`1`\nstep n transform expr=`2`\nedge ap y on=approved\nedge ap n on=rejected",
			ticks:    [][]Input{{ApprovalDecided{Node: "ap", Approved: false}}},
			run:      RunSucceeded, nodes: map[string]NodeState{"ap": NodeSucceeded, "y": NodeSkipped, "n": NodeSucceeded},
		},
		{
			name:     "done fires on success and on continued failure",
			manifest: "step a task retry=1 on_error=continue\nstep b task\nstep da transform expr=`1`\nstep db transform expr=`2`\nedge a da on=done\nedge b db on=done",
			ticks:    [][]Input{{failed("a", 1, "x", false), ok("b", 1, nil)}},
			run:      RunSucceeded, nodes: map[string]NodeState{"da": NodeSucceeded, "db": NodeSucceeded},
		},
		{
			name:     "done dies when its source is skipped",
			manifest: "step a task run_if=`false`\nstep d transform expr=`1`\nedge a d on=done",
			run:      RunSucceeded, nodes: map[string]NodeState{"a": NodeSkipped, "d": NodeSkipped},
			output: `{}`,
		},
	})
}

func TestJoinsAndSkips(t *testing.T) {
	t.Parallel()
	const diamond = "step c condition expr=`input.v`\nstep l transform expr=`1`\nstep r transform expr=`2`\n" +
		"step j transform expr=`3` join=%s\nstep k transform expr=`4`\nedge c l on=true\nedge c r on=false\nedge l j\nedge r j\nedge j k"
	runGraphCases(t, []graphCase{
		{
			name: "join all skipped when one edge is dead; skip propagates", manifest: fmt.Sprintf(diamond, "all"),
			input: map[string]any{"v": true},
			run:   RunSucceeded, nodes: map[string]NodeState{"l": NodeSucceeded, "r": NodeSkipped, "j": NodeSkipped, "k": NodeSkipped},
		},
		{
			name: "join any runs on the first fired edge", manifest: fmt.Sprintf(diamond, "any"),
			input: map[string]any{"v": true},
			run:   RunSucceeded, nodes: map[string]NodeState{"l": NodeSucceeded, "r": NodeSkipped, "j": NodeSucceeded, "k": NodeSucceeded},
		},
		{
			name:     "join all ready when every edge fired",
			manifest: "step a task\nstep b task\nstep j transform expr=`steps.a.output + steps.b.output`\nedge a j\nedge b j",
			ticks:    [][]Input{{ok("a", 1, json.Number("1"))}, {ok("b", 1, json.Number("2"))}},
			run:      RunSucceeded, output: `{"j":3}`,
		},
		{
			name:     "join any skipped when all edges dead",
			manifest: "step a task run_if=`false`\nstep b task run_if=`false`\nstep j transform expr=`1` join=any\nedge a j\nedge b j",
			run:      RunSucceeded, nodes: map[string]NodeState{"j": NodeSkipped},
		},
		{
			name:     "run_if false skips, true runs",
			manifest: "step a transform expr=`1` run_if=`input.x > 1`\nstep b transform expr=`2` run_if=`input.x == 1`",
			input:    map[string]any{"x": json.Number("1")},
			run:      RunSucceeded, nodes: map[string]NodeState{"a": NodeSkipped, "b": NodeSucceeded}, output: `{"b":2}`,
		},
		{
			name:     "run_if error fails with expression_error",
			manifest: "step a transform expr=`1` run_if=`input.nope`",
			input:    map[string]any{},
			run:      RunFailed, nodes: map[string]NodeState{"a": NodeFailed},
		},
	})
}

func TestChoiceGroups(t *testing.T) {
	t.Parallel()
	const m = "step r transform expr=`1`\nstep a transform expr=`\"a\"`\nstep b transform expr=`\"b\"`\nstep z transform expr=`\"z\"`\n" +
		"choice r a 0 when=`input.n > 10`\nchoice r b 1 when=`input.n > 5`\nchoice r z 2 default"
	for _, tc := range []struct {
		n    int
		want string
	}{{20, `{"a":"a"}`}, {7, `{"b":"b"}`}, {1, `{"z":"z"}`}} {
		runGraphCases(t, []graphCase{{
			name: fmt.Sprint("n=", tc.n), manifest: m, input: map[string]any{"n": json.Number(fmt.Sprint(tc.n))},
			run: RunSucceeded, output: tc.want,
		}})
	}
}

// A choice group's conditions read their own source's output.
func TestChoiceReadsItsSourcesOutput(t *testing.T) {
	t.Parallel()
	const m = "step r transform expr=`input.n * 2`\nstep a transform expr=`\"a\"`\nstep z transform expr=`\"z\"`\n" +
		"choice r a 0 when=`steps.r.output > 10 && steps.r.state == \"succeeded\"`\nchoice r z 1 default"
	for _, tc := range []struct {
		n    int
		want string
	}{{6, `{"a":"a"}`}, {2, `{"z":"z"}`}} {
		runGraphCases(t, []graphCase{{
			name: fmt.Sprint("n=", tc.n), manifest: m, input: map[string]any{"n": json.Number(fmt.Sprint(tc.n))},
			run: RunSucceeded, output: tc.want,
		}})
	}
}

func TestOnErrorAndRunOutcome(t *testing.T) {
	t.Parallel()
	runGraphCases(t, []graphCase{
		{
			name:     "fail policy fails the run, cancels running, skips pending",
			manifest: "step a task retry=1\nstep b task\nstep c transform expr=`1`\nedge a c",
			ticks:    [][]Input{{failed("a", 1, "boom", true)}},
			run:      RunFailed, nodes: map[string]NodeState{"a": NodeFailed, "b": NodeCancelled, "c": NodeSkipped},
		},
		{
			name:     "continue policy lets the run succeed",
			manifest: "step a task retry=1 on_error=continue\nstep b task\nstep c transform expr=`1`\nedge a c",
			ticks:    [][]Input{{failed("a", 1, "boom", true), ok("b", 1, "B")}},
			run:      RunSucceeded, nodes: map[string]NodeState{"c": NodeSkipped}, output: `{"b":"B"}`,
		},
		{
			name:     "output_expr",
			manifest: "step a transform expr=`input.x`\noutput_expr `{\"x\": steps.a.output, \"s\": steps.a.state}`",
			input:    map[string]any{"x": "X"},
			run:      RunSucceeded, output: `{"s":"succeeded","x":"X"}`,
		},
		{
			name:     "output_expr error fails the run",
			manifest: "step a transform expr=`1`\noutput_expr `steps.nope.output`",
			run:      RunFailed,
		},
		{
			name:     "cancel cancels everything",
			manifest: "step a task\nstep w wait duration_ms=5000\nstep b transform expr=`1`\nedge a b",
			ticks:    [][]Input{{Cancel{Reason: "stop"}, ok("a", 1, nil)}},
			run:      RunCancelled, nodes: map[string]NodeState{"a": NodeCancelled, "w": NodeCancelled, "b": NodeCancelled},
		},
		{
			name:     "retry from node keeps upstream and resumes",
			manifest: "step a task\nstep b task retry=1\nstep c transform expr=`[steps.a.output, steps.b.output]`\nedge a b\nedge b c",
			ticks: [][]Input{
				{ok("a", 1, "A")}, {failed("b", 1, "boom", false)}, {RetryNode{Node: "b"}},
				{StepResult{Node: "b", Generation: 1, Attempt: 1, Output: "B"}},
			},
			run: RunSucceeded, output: `{"c":["A","B"]}`,
		},
	})
}

func TestStaleAndDuplicateResultsDiscarded(t *testing.T) {
	t.Parallel()
	m, _ := parseManifest("step a task\nstep b task\nedge a b")
	s := newSim(t, m, nil)
	s.tick(t0, 1)
	s.tick(t0, 1, failed("a", 1, "x", true))
	ds := s.tick(t0, 1,
		ok("a", 1, "stale"), // attempt 1 was retried
		StepResult{Node: "a", Generation: 3, Attempt: 2}, // wrong generation
		ok("a", 3, "future"),                             // not dispatched
		ok("a", 2, "A"),
		ok("a", 2, "dup"),
		ok("nope", 1, nil),
	)
	var reasons []string
	for _, x := range ds[0].Discarded {
		reasons = append(reasons, x.Reason)
	}
	want := "stale attempt,stale attempt,stale attempt,duplicate result,unknown node"
	if got := strings.Join(reasons, ","); got != want {
		t.Fatalf("discards = %s, want %s", got, want)
	}
	if got := s.nodes["a"].Output; got != "A" {
		t.Fatalf("output = %v", got)
	}
}

func TestIdempotencyKeyGenerations(t *testing.T) {
	t.Parallel()
	m, _ := parseManifest("step a task retry=2")
	s := newSim(t, m, nil)
	keys := func(ds []*Decision) (out []string) {
		for _, d := range ds {
			for _, c := range d.Commands {
				if x, ok := c.(DispatchAttempt); ok {
					out = append(out, fmt.Sprintf("%s#%d", x.IdempotencyKey, x.Attempt))
				}
			}
		}
		return out
	}
	var got []string
	got = append(got, keys(s.tick(t0, 1))...)
	got = append(got, keys(s.tick(t0, 1, failed("a", 1, "x", true)))...)
	s.tick(t0, 1, failed("a", 2, "x", true))
	got = append(got, keys(s.tick(t0, 1, RetryNode{Node: "a"}))...)
	want := "run1:a#1 run1:a#2 run1:a:g1#1"
	if strings.Join(got, " ") != want {
		t.Fatalf("keys = %v, want %s", got, want)
	}
}

// A run under concurrency rules freed its slots when it ended, so the
// engine discards a retry that would reopen it (no admission would count
// it); a retry delivered while it still runs is not affected.
func TestRetryOfAnEndedRunUnderConcurrencyIsDiscarded(t *testing.T) {
	t.Parallel()
	m, _ := parseManifest("step a task")
	m.Concurrency = []definition.ConcurrencyRule{{Limit: 1, Strategy: definition.StrategyQueue}}
	s := newSim(t, m, nil)
	s.tick(t0, 1)
	s.tick(t0, 1, failed("a", 1, "boom", false))
	if s.run.Status != RunFailed {
		t.Fatalf("run %s, want failed", s.run.Status)
	}
	s.tick(t0, 1, RetryNode{Node: "a"})
	if s.run.Status != RunFailed || s.nodes["a"].State != NodeFailed {
		t.Fatalf("after the retry: run %s, node %s; want both still failed", s.run.Status, s.nodes["a"].State)
	}
}
