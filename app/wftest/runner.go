package wftest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
)

// RunID is the id every in-memory run has: the run variable's run.id.
const RunID = "00000000-0000-4000-8000-000000000001"

// MaxTicks bounds one run, so a definition that never ends fails its
// test instead of hanging it.
const MaxTicks = 100_000

// Runner runs cases against compiled definitions. The zero value is not
// usable: build one with NewRunner.
type Runner struct {
	eng   *engine.Engine
	cache *expr.Cache
}

// NewRunner builds a runner with the server's CEL environment and
// engine defaults.
func NewRunner() (*Runner, error) {
	env, err := expr.NewEnv()
	if err != nil {
		return nil, err
	}
	cache := expr.NewCache(env, 4096)
	return &Runner{eng: &engine.Engine{Eval: engine.NewCELEvaluator(cache)}, cache: cache}, nil
}

// Compile compiles a definition document (JSON or YAML) as the server
// would on publish.
func Compile(doc []byte) (*definition.Manifest, error) {
	c, err := definition.Compile(doc, definition.FormatAuto)
	if err != nil {
		return nil, err
	}
	return c.Manifest, nil
}

// Run runs one case of m from start in virtual time and returns its
// outcome. An error means the case could not be run (a bad delivery, a
// missing mock), not that the run failed.
func (r *Runner) Run(ctx context.Context, m *definition.Manifest, c Case, start time.Time) (*Outcome, error) {
	c, err := normalized(c)
	if err != nil {
		return nil, err
	}
	s := newSim(r, m, c, start)
	if err = s.schedule(c.Deliver); err != nil {
		return nil, err
	}
	if err := s.drive(ctx); err != nil {
		return nil, err
	}
	return s.outcome(), nil
}

// drive ticks until the run ends or nothing is left to wake it.
func (s *sim) drive(ctx context.Context) error {
	if err := s.tick(ctx, nil); err != nil {
		return err
	}
	for !s.store.Run.Status.Terminal() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped after %d ticks: %w", s.ticks, err)
		}
		if s.ticks > MaxTicks {
			return fmt.Errorf("run did not end within %d ticks", MaxTicks)
		}
		due, ok := s.agenda.next()
		if !ok {
			s.stuck = true
			return nil
		}
		s.now = maxTime(s.now, due)
		inputs, err := s.take()
		if err != nil {
			return err
		}
		if len(inputs) == 0 {
			continue // held until its approval or case opens, or an event no one waits for
		}
		if err := s.tick(ctx, inputs); err != nil {
			return err
		}
	}
	return nil
}

// tick is one coordinator tick: load, decide, persist, and again while
// the decision needs more children.
func (s *sim) tick(ctx context.Context, inputs []engine.Input) error {
	var needs []engine.Need
	seed := s.seed()
	for call := 0; call == 0 || len(needs) > 0; call++ {
		if call > 16 {
			return fmt.Errorf("decision needs never satisfied: %+v", needs)
		}
		st := s.load(inputs, needs)
		d, err := s.r.eng.Decide(ctx, s.m, st, engine.Tick{Now: s.now, Seed: seed + uint64(call), Inputs: inputs})
		if err != nil {
			return fmt.Errorf("decide: %w", err)
		}
		s.ticks++
		if err := s.persist(d); err != nil {
			return err
		}
		if err := s.perform(ctx, d.Commands); err != nil {
			return err
		}
		inputs, needs = nil, d.Needs
	}
	return nil
}

// seed is the shell's: from the run id and the run's version (here the
// number of ticks so far).
func (s *sim) seed() uint64 {
	h := fnv.New64a()
	h.Write([]byte(RunID))
	return h.Sum64() ^ uint64(s.ticks)*0x9e3779b97f4a7c15
}

// load is what the shell reads for a tick: the run, every manifest
// node, the children the inputs name, the children Needs asks for, and
// the buffered signals.
func (s *sim) load(inputs []engine.Input, needs []engine.Need) *engine.State {
	st := &engine.State{Run: s.store.Run, Nodes: map[string]*engine.Node{}, Signals: slices.Clone(s.store.Signals)}
	for _, step := range s.m.Steps {
		s.copyNode(st, step.Ref)
	}
	for _, in := range inputs {
		s.copyNode(st, engine.InputNode(in))
	}
	for _, nd := range needs {
		for id, n := range s.store.Nodes {
			c := n.Child
			if c != nil && c.Scatter == nd.Scatter && c.Index >= nd.From && c.Index < nd.To && (!nd.Live || !n.State.Terminal()) {
				st.Nodes[id] = n.Clone()
			}
		}
	}
	return st
}

func (s *sim) copyNode(st *engine.State, id string) {
	if n := s.store.Nodes[id]; n != nil {
		st.Nodes[id] = n.Clone()
	}
}

// persist stores the decision as the database would: the run and each
// node take a trip through their JSON, so the next tick reads what a
// server reads back (an empty output, say, is stored as none).
func (s *sim) persist(d *engine.Decision) error {
	s.store.Apply(d)
	if err := reload(&s.store.Run); err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	for _, n := range d.Nodes {
		stored := s.store.Nodes[n.ID]
		if err := reload(stored); err != nil {
			return fmt.Errorf("store node %s: %w", n.ID, err)
		}
	}
	s.tried = append(s.tried, d.Attempts...)
	for _, tr := range d.Transitions {
		s.history = append(s.history, tr)
		if _, ok := s.m.Step(tr.Node); ok && engine.NodeState(tr.To).Terminal() {
			s.ended = append(s.ended, tr.Node+" "+tr.To)
		}
	}
	return nil
}

// reload replaces *v with what decoding its JSON gives.
func reload[T any](v *T) error {
	raw, err := jsonvalue.Marshal(v)
	if err != nil {
		return err
	}
	var out T
	if err := jsonvalue.Unmarshal(raw, &out); err != nil {
		return err
	}
	*v = out
	return nil
}

// ErrNoMock is returned for a worker step the case has no mock for.
var ErrNoMock = errors.New("no mock")

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// normalized brings the case's values (built in Go, or read from YAML)
// to the JSON value model, as a trip through the API would.
func normalized(c Case) (Case, error) {
	var err error
	if c.Input, err = jsonvalue.Normalize(c.Input); err != nil {
		return c, fmt.Errorf("input: %w", err)
	}
	mocks := make(map[string]MockList, len(c.Mocks))
	for ref, l := range c.Mocks {
		out := make(MockList, len(l))
		for i, m := range l {
			if m.Output, err = jsonvalue.Normalize(m.Output); err != nil {
				return c, fmt.Errorf("mocks.%s: %w", ref, err)
			}
			out[i] = m
		}
		mocks[ref] = out
	}
	c.Mocks = mocks
	return c, nil
}
