package wftest

import (
	"fmt"
	"slices"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
)

// sim is one in-memory run: the state a database would hold, the
// virtual clock and what the outside world owes the run.
type sim struct {
	r       *Runner
	m       *definition.Manifest
	c       Case
	start   time.Time
	now     time.Time
	store   engine.State
	history []engine.Transition
	tried   []engine.Attempt
	ended   []string
	ticks   int
	stuck   bool
	agenda  agenda
	// open holds the approval or case key open on each node; held the
	// deliveries waiting for one to open.
	open     map[string]string
	held     map[string][]*Delivery
	children map[string]int
	sent     int
}

func newSim(r *Runner, m *definition.Manifest, c Case, start time.Time) *sim {
	meta := map[string]any{
		"id": RunID, "key": m.Key, "version": int64(1), "subject": "",
		"context": map[string]any{}, "search_attributes": map[string]any{},
		"parent_run_id": "", "root_run_id": RunID, "depth": int64(0),
	}
	return &sim{
		r: r, m: m, c: c, start: start, now: start,
		store:    engine.State{Run: engine.Run{ID: RunID, Status: engine.RunPending, Input: c.Input, Meta: meta}, Nodes: map[string]*engine.Node{}},
		open:     map[string]string{},
		held:     map[string][]*Delivery{},
		children: map[string]int{},
	}
}

// schedule puts the case's deliveries on the agenda.
func (s *sim) schedule(ds []Delivery) error {
	for i := range ds {
		d := &ds[i]
		t, err := at(s.start, d.At)
		if err != nil {
			return fmt.Errorf("deliver[%d]: %w", i, err)
		}
		if t.Before(s.start) {
			return fmt.Errorf("deliver[%d]: at %s is before the start", i, d.At)
		}
		s.agenda.add(t, "", nil, d)
	}
	return nil
}

// take pops the next due item as an input; a delivery for an approval or
// case not open yet is held until it opens.
func (s *sim) take() ([]engine.Input, error) {
	it := s.agenda.pop()
	if it.input != nil {
		return []engine.Input{it.input}, nil
	}
	in, err := s.convert(it.delivery)
	if in == nil || err != nil {
		return nil, err
	}
	return []engine.Input{in}, nil
}

// convert turns a delivery into the input the server would deliver.
func (s *sim) convert(d *Delivery) (engine.Input, error) {
	s.sent++
	id := fmt.Sprintf("wftest-%d", s.sent)
	switch {
	case d.Signal != nil:
		return engine.SignalReceived{Signal: engine.Signal{RequestID: id, Name: d.Signal.Name, Payload: d.Signal.Payload}}, nil
	case d.Event != nil:
		if !s.listens(d.Event.Name) {
			return nil, nil // as on a server: offered only to the nodes waiting for it
		}
		return engine.EventMatched{EventID: id, Name: d.Event.Name, Data: d.Event.Data}, nil
	case d.Approval != nil:
		return s.interaction(d.Approval.Node, d), nil
	case d.Case != nil:
		return s.interaction(d.Case.Node, d), nil
	case d.Cancel != "":
		return engine.Cancel{RequestID: id, Reason: d.Cancel, By: "wftest"}, nil
	case d.CancelNode != "":
		return engine.CancelNode{RequestID: id, Node: d.CancelNode}, nil
	case d.Retry != "":
		return engine.RetryNode{RequestID: id, Node: d.Retry}, nil
	}
	return nil, fmt.Errorf("a delivery needs one of signal, event, approval, case, cancel, cancel_node, retry")
}

// listens reports whether a node waits for events named name.
func (s *sim) listens(name string) bool {
	for _, n := range s.store.Nodes {
		if w := n.Waiting; n.State == engine.NodeWaiting && w != nil && (w.Name == name || slices.Contains(w.Events, name)) {
			return true
		}
	}
	return false
}

// interaction is the decision on node's open approval or case, or nil
// (held) while none is open.
func (s *sim) interaction(node string, d *Delivery) engine.Input {
	key, ok := s.open[node]
	if !ok {
		s.held[node] = append(s.held[node], d)
		return nil
	}
	if a := d.Approval; a != nil {
		return engine.ApprovalDecided{Node: node, Approved: a.Approved, By: orText(a.By, "wftest"), Comment: a.Comment, Approval: key}
	}
	return engine.CaseStatusChanged{Node: node, Status: d.Case.Status, Data: d.Case.Data}
}

// opened records node's new approval or case and releases the decisions
// held for it.
func (s *sim) opened(node, key string) {
	s.open[node] = key
	for _, d := range s.held[node] {
		s.agenda.add(s.now, "", nil, d)
	}
	delete(s.held, node)
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// outcome reads the final state.
func (s *sim) outcome() *Outcome {
	run := s.store.Run
	o := &Outcome{
		Status: string(run.Status), Output: run.Output, Error: run.Error,
		Nodes: map[string]string{}, Attempts: map[string]int{}, Ended: s.ended,
		Ticks: s.ticks, Stuck: s.stuck, state: &s.store, manifest: s.m, history: s.history, tried: s.tried,
	}
	end := s.now
	if !run.FinishedAt.IsZero() {
		end = run.FinishedAt
	}
	o.Duration = end.Sub(s.start).String()
	for id, n := range s.store.Nodes {
		o.Nodes[id] = string(n.State)
		o.Attempts[id] = n.Attempt
	}
	return o
}
