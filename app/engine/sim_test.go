package engine

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testEngine(t testing.TB) *Engine {
	t.Helper()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{Eval: NewCELEvaluator(expr.NewCache(env, 256))}
}

// sim is a fake shell: it stores the run like Postgres would, loads the
// partial state a tick needs, calls Decide, checks the decision left the
// loaded state untouched, persists, and serves Needs.
type sim struct {
	t        testing.TB
	eng      *Engine
	m        *definition.Manifest
	run      Run
	nodes    map[string]*Node
	signals  []Signal
	history  []Transition
	attempts map[[3]any]Attempt
	decided  []*Decision
}

func newSim(t testing.TB, m *definition.Manifest, input any) *sim {
	return &sim{
		t: t, eng: testEngine(t), m: m,
		run:      Run{ID: "run1", Status: RunPending, Input: input},
		nodes:    map[string]*Node{},
		attempts: map[[3]any]Attempt{},
	}
}

// load is what the shell reads: the run, every manifest node, the
// children the inputs name, the buffered signals.
func (s *sim) load(inputs []Input, needs []Need) *State {
	st := &State{Run: s.run, Nodes: map[string]*Node{}, Signals: slices.Clone(s.signals)}
	for _, step := range s.m.Steps {
		if n := s.nodes[step.Ref]; n != nil {
			st.Nodes[n.ID] = n.Clone()
		}
	}
	for _, in := range inputs {
		if id := InputNode(in); id != "" && s.nodes[id] != nil {
			st.Nodes[id] = s.nodes[id].Clone()
		}
	}
	for _, nd := range needs {
		for id, n := range s.nodes {
			c := n.Child
			if c != nil && c.Scatter == nd.Scatter && c.Index >= nd.From && c.Index < nd.To && (!nd.Live || !n.State.Terminal()) {
				st.Nodes[id] = n.Clone()
			}
		}
	}
	return st
}

// tick runs one coordinator tick (plus the follow-up calls Needs ask
// for) and returns every decision made.
func (s *sim) tick(now time.Time, seed uint64, inputs ...Input) []*Decision {
	s.t.Helper()
	var out []*Decision
	var needs []Need
	for call := 0; call == 0 || len(needs) > 0; call++ {
		if call > 4 {
			s.t.Fatalf("needs never satisfied: %+v", needs)
		}
		st := s.load(inputs, needs)
		before := snapshot(s.t, st)
		d, err := s.eng.Decide(context.Background(), s.m, st, Tick{Now: now, Seed: seed, Inputs: inputs})
		if err != nil {
			s.t.Fatalf("Decide: %v", err)
		}
		if after := snapshot(s.t, st); !reflect.DeepEqual(before, after) {
			s.t.Fatalf("Decide mutated its input state")
		}
		s.persist(d)
		out = append(out, d)
		inputs, needs = nil, d.Needs
	}
	return out
}

func (s *sim) persist(d *Decision) {
	s.run = d.Run
	for _, n := range d.Nodes {
		s.nodes[n.ID] = n.Clone()
	}
	for _, a := range d.Attempts {
		s.attempts[[3]any{a.Node, a.Generation, a.Attempt}] = a
	}
	s.signals = applySignals(s.signals, d.Signals)
	s.history = append(s.history, d.Transitions...)
	s.decided = append(s.decided, d)
}

func snapshot(t testing.TB, st *State) string {
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
