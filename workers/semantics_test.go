package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/steps"
)

// graph builds a manifest from steps and edges; entrypoints and order are
// derived the simple way (steps are given in topological order).
func graph(key string, sts []definition.Step, edges ...definition.Edge) *definition.Manifest {
	m := &definition.Manifest{Key: key, Steps: sts, Edges: edges}
	in := map[string]bool{}
	for _, e := range edges {
		in[e.To] = true
	}
	for _, st := range sts {
		m.Order = append(m.Order, st.Ref)
		if !in[st.Ref] {
			m.Entrypoints = append(m.Entrypoints, st.Ref)
		}
	}
	return m
}

func edge(from, to string, on definition.Outcome) definition.Edge {
	return definition.Edge{From: from, To: to, On: on}
}

func with(st definition.Step, f func(*definition.Step)) definition.Step {
	f(&st)
	return st
}

func noop(ref string) definition.Step {
	return step(ref, definition.TypeTask, map[string]any{"handler": "builtin.noop"})
}

func failing(ref string) definition.Step {
	return step(ref, definition.TypeTask, map[string]any{"handler": "builtin.fail", "input": map[string]any{"message": "boom"}})
}

// runStates runs m to its end and returns the run and its node states.
func (b testBundle) runStates(t *testing.T, m *definition.Manifest, input any) (engine.RunStatus, map[string]engine.NodeState, map[string]any) {
	t.Helper()
	b.publish(t, m)
	run := b.waitTerminal(t, b.start(t, m.Key, input))
	nodes, err := b.store.RunNodesSteps(b.ctx, b.tenant.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	states, outputs := map[string]engine.NodeState{}, map[string]any{}
	for _, n := range nodes {
		states[n.ID], outputs[n.ID] = n.State, n.Output
	}
	return run.Status, states, outputs
}

func TestGraphSemanticsOnPostgres(t *testing.T) {
	t.Parallel()
	b := setup(t)
	S, F, Sk := engine.NodeSucceeded, engine.NodeFailed, engine.NodeSkipped
	continueOnError := func(s *definition.Step) { s.OnError = definition.OnErrorContinue }
	cases := []struct {
		name   string
		m      *definition.Manifest
		input  any
		status engine.RunStatus
		nodes  map[string]engine.NodeState
	}{
		{"success and error edges", graph("edges",
			[]definition.Step{with(failing("a"), continueOnError), noop("ok"), noop("handle"), noop("always")},
			edge("a", "ok", definition.OutcomeSuccess), edge("a", "handle", definition.OutcomeError), edge("a", "always", definition.OutcomeDone)),
			nil, engine.RunSucceeded, map[string]engine.NodeState{"a": F, "ok": Sk, "handle": S, "always": S}},
		{"condition true and false", graph("cond",
			[]definition.Step{step("c", definition.TypeCondition, map[string]any{"expr": "input.x > 1.0"}), noop("yes"), noop("no")},
			edge("c", "yes", definition.OutcomeTrue), edge("c", "no", definition.OutcomeFalse)),
			map[string]any{"x": 5}, engine.RunSucceeded, map[string]engine.NodeState{"c": S, "yes": S, "no": Sk}},
		{"join all skipped by a dead edge, join any runs", graph("joins",
			[]definition.Step{step("c", definition.TypeCondition, map[string]any{"expr": "false"}), noop("t"), noop("f"),
				noop("all"), with(noop("any"), func(s *definition.Step) { s.Join = definition.JoinAny })},
			edge("c", "t", definition.OutcomeTrue), edge("c", "f", definition.OutcomeFalse),
			edge("t", "all", definition.OutcomeSuccess), edge("f", "all", definition.OutcomeSuccess),
			edge("t", "any", definition.OutcomeSuccess), edge("f", "any", definition.OutcomeSuccess)),
			nil, engine.RunSucceeded, map[string]engine.NodeState{"c": S, "t": Sk, "f": S, "all": Sk, "any": S}},
		{"choice group picks the first true branch", graph("choice",
			[]definition.Step{noop("route"), noop("gold"), noop("silver"), noop("standard")},
			definition.Edge{From: "route", To: "gold", On: definition.OutcomeSuccess, Choice: &definition.Branch{Index: 0, When: `input.tier == "gold"`}},
			definition.Edge{From: "route", To: "silver", On: definition.OutcomeSuccess, Choice: &definition.Branch{Index: 1, When: `input.tier == "silver"`}},
			definition.Edge{From: "route", To: "standard", On: definition.OutcomeSuccess, Choice: &definition.Branch{Index: 2, Default: true}}),
			map[string]any{"tier": "silver"}, engine.RunSucceeded, map[string]engine.NodeState{"route": S, "gold": Sk, "silver": S, "standard": Sk}},
		{"run_if false skips and propagates", graph("runif",
			[]definition.Step{with(noop("a"), func(s *definition.Step) { s.RunIf = "input.go" }), noop("b")},
			edge("a", "b", definition.OutcomeSuccess)),
			map[string]any{"go": false}, engine.RunSucceeded, map[string]engine.NodeState{"a": Sk, "b": Sk}},
		{"on_error fail fails the run and skips the rest", graph("fail",
			[]definition.Step{failing("a"), noop("b")}, edge("a", "b", definition.OutcomeSuccess)),
			nil, engine.RunFailed, map[string]engine.NodeState{"a": F, "b": Sk}},
	}
	for _, tc := range cases {
		status, nodes, _ := b.runStates(t, tc.m, tc.input)
		if status != tc.status {
			t.Errorf("%s: run %s, want %s", tc.name, status, tc.status)
		}
		for ref, want := range tc.nodes {
			if nodes[ref] != want {
				t.Errorf("%s: node %s is %s, want %s", tc.name, ref, nodes[ref], want)
			}
		}
	}
}

func TestAttemptTimeoutAndPanicAreRetriedThenFail(t *testing.T) {
	t.Parallel()
	var panics atomic.Int32
	b := setup(t, map[string]steps.Handler{"test.panic": func(context.Context, steps.Call) (any, error) {
		panics.Add(1)
		panic("handler exploded")
	}})
	slow := with(step("slow", definition.TypeTask, map[string]any{"handler": "builtin.sleep", "input": map[string]any{"ms": 60000}}),
		func(s *definition.Step) { s.TimeoutMS = 50 })
	status, nodes, _ := b.runStates(t, graph("slow", []definition.Step{slow}), nil)
	if status != engine.RunFailed || nodes["slow"] != engine.NodeFailed {
		t.Fatalf("slow step: run %s node %s", status, nodes["slow"])
	}
	status, _, _ = b.runStates(t, graph("panics", []definition.Step{step("p", definition.TypeTask, map[string]any{"handler": "test.panic"})}), nil)
	if status != engine.RunFailed || panics.Load() != 3 {
		t.Fatalf("panicking step: run %s after %d attempts, want failed after 3", status, panics.Load())
	}
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := graph("run-timeout", []definition.Step{step("s", definition.TypeTask, map[string]any{"handler": "builtin.sleep", "input": map[string]any{"ms": 60000}})})
	m.TimeoutMS = 200
	status, _, _ := b.runStates(t, m, nil)
	if status != engine.RunTimedOut {
		t.Fatalf("run %s, want timed_out", status)
	}
}

func TestCancelRun(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	b := setup(t, map[string]steps.Handler{"test.block": func(ctx context.Context, _ steps.Call) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	b.publish(t, graph("cancel-me", []definition.Step{step("block", definition.TypeTask, map[string]any{"handler": "test.block"}), noop("after")},
		edge("block", "after", definition.OutcomeSuccess)))
	id := b.start(t, "cancel-me", nil)
	<-started
	if err := b.coord.Runs.Control(b.ctx, b.tenant.ID, id, engine.Cancel{RequestID: "c1", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunCancelled {
		t.Fatalf("run %s, want cancelled", run.Status)
	}
}

func TestRetryFromFailedNodeKeepsUpstream(t *testing.T) {
	t.Parallel()
	var healed atomic.Bool
	var upstreamCalls atomic.Int32
	b := setup(t, map[string]steps.Handler{
		"test.count": func(_ context.Context, c steps.Call) (any, error) {
			upstreamCalls.Add(1)
			return map[string]any{"n": 7}, nil
		},
		"test.flaky": func(_ context.Context, c steps.Call) (any, error) {
			if !healed.Load() {
				return nil, steps.Permanent(errors.New("not yet"))
			}
			return map[string]any{"key": c.IdempotencyKey}, nil
		},
	})
	b.publish(t, graph("heal", []definition.Step{
		step("up", definition.TypeTask, map[string]any{"handler": "test.count"}),
		step("flaky", definition.TypeTask, map[string]any{"handler": "test.flaky"}),
	}, edge("up", "flaky", definition.OutcomeSuccess)))
	id := b.start(t, "heal", nil)
	if run := b.waitTerminal(t, id); run.Status != engine.RunFailed {
		t.Fatalf("first pass: %s, want failed", run.Status)
	}
	healed.Store(true)
	if err := b.coord.Runs.RetryNode(b.ctx, b.tenant.ID, id, "flaky"); err != nil {
		t.Fatal(err)
	}
	run := b.waitTerminalAfter(t, id, engine.RunFailed)
	if run.Status != engine.RunSucceeded {
		t.Fatalf("after retry: %s, want succeeded", run.Status)
	}
	if upstreamCalls.Load() != 1 {
		t.Fatalf("upstream ran %d times, want once (its output is kept)", upstreamCalls.Load())
	}
	nodes, _ := b.store.RunNodesByName(b.ctx, b.tenant.ID, id, []string{"flaky"})
	out, _ := json.Marshal(nodes[0].Output)
	if want := `{"key":"` + id.String() + `:flaky:g1"}`; string(out) != want {
		t.Fatalf("retried node output %s, want a new idempotency generation %s", out, want)
	}
}

func TestIdempotentTriggers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publish(t, graph("once", []definition.Step{noop("a")}))
	ids := make(chan uuid.UUID, 50)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "once", IdempotencyKey: "order-42"}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			ids <- run.ID
		}()
	}
	wg.Wait()
	close(ids)
	distinct := map[uuid.UUID]bool{}
	for id := range ids {
		distinct[id] = true
	}
	if len(distinct) != 1 {
		t.Fatalf("50 triggers with one idempotency key made %d runs", len(distinct))
	}
}
