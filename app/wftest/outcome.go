package wftest

import (
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
)

// Expect is what a case's run must come to. Every field is optional:
// only what is given is checked.
type Expect struct {
	// Status is the run's final status (succeeded, failed, cancelled,
	// timed_out, terminated, or waiting when nothing is left to wake it).
	Status string `json:"status,omitempty"`
	// Output is the run's output, compared as JSON values.
	Output any `json:"output,omitempty"`
	// Error is the run's error code.
	Error string `json:"error,omitempty"`
	// Nodes maps a ref (or a scatter child's id) to its final state.
	Nodes map[string]string `json:"nodes,omitempty"`
	// Attempts maps a ref (or a scatter child's id) to its attempts.
	Attempts map[string]int `json:"attempts,omitempty"`
	// Order lists nodes as they ended, "REF STATE" or just "REF": they
	// must have ended in this order, others between them allowed.
	Order []string `json:"order,omitempty"`
	// Assert are CEL expressions over the final state that must be true:
	// input, steps (every ended step's output, state and error) and run
	// (id, key, version, status, output, error).
	Assert []string `json:"assert,omitempty"`
	// Duration is the virtual time from start to end, e.g. "72h0m0s".
	Duration string `json:"duration,omitempty"`
}

// Outcome is what a run came to.
type Outcome struct {
	Status   string
	Output   any
	Error    *engine.Error
	Nodes    map[string]string
	Attempts map[string]int
	// Ended lists "REF STATE" for each manifest node as it ended.
	Ended []string
	// Duration is the virtual time from start to end.
	Duration string
	// Ticks counts the Decide calls.
	Ticks int
	// Stuck is set when the run waits with nothing left to wake it.
	Stuck bool

	state    *engine.State
	manifest *definition.Manifest
	history  []engine.Transition
	tried    []engine.Attempt
}

// AttemptRecords are the attempts' records as the run wrote them, in
// order (an attempt may be written more than once as it changes).
func (o *Outcome) AttemptRecords() []engine.Attempt { return o.tried }

// State is the run's final state.
func (o *Outcome) State() *engine.State { return o.state }

// History is every transition of the run, in order.
func (o *Outcome) History() []engine.Transition { return o.history }

// Observed returns the outcome as an expectation: what Update writes.
// Attempts are listed for worker steps and subworkflows only.
func (o *Outcome) Observed() *Expect {
	e := &Expect{Status: o.Status, Output: o.Output, Nodes: map[string]string{}, Attempts: map[string]int{}, Order: o.Ended, Duration: o.Duration}
	if o.Error != nil {
		e.Error = o.Error.Code
	}
	for _, s := range o.manifest.Steps {
		n := o.state.Nodes[s.Ref]
		if n == nil {
			continue
		}
		e.Nodes[s.Ref] = string(n.State)
		if worker(s.Type) && n.Attempt > 0 {
			e.Attempts[s.Ref] = n.Attempt
		}
	}
	return e
}

func worker(t definition.StepType) bool {
	return t == definition.TypeTask || t == definition.TypeHTTP || t == definition.TypeSubworkflow
}
