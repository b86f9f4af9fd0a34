package engine

import "time"

// Decision is what one Decide call changed: deltas, not a copy of the run.
// The shell persists it in one transaction (see doc.go).
type Decision struct {
	// Run is the run row after the tick; RunChanged reports whether
	// anything but record_version needs writing.
	Run        Run
	RunChanged bool
	// Nodes are the nodes inserted or changed, in first-change order:
	// upsert them by (run, id).
	Nodes []*Node
	// Attempts are attempt records to upsert by (run, node, generation,
	// attempt).
	Attempts []Attempt
	// Transitions are the history entries, in order; the last Seq equals
	// Run.TransitionCount.
	Transitions []Transition
	Commands    []Command
	Signals     []SignalChange
	Events      []EventUse
	// Discarded lists inputs that changed nothing (stale, duplicate,
	// unmatched) and why.
	Discarded []Discard
	// Needs asks the shell to load more scatter children and call Decide
	// again (with no new inputs) in the same transaction.
	Needs []Need
}

// Transition is one history entry: a change of the run's status (Node
// empty) or of a node's state.
type Transition struct {
	Seq  int64     `json:"seq"`
	At   time.Time `json:"at"`
	Node string    `json:"node,omitempty"`
	From string    `json:"from"`
	To   string    `json:"to"`
	// Generation and Attempt locate the node execution the entry is about.
	Generation int    `json:"generation,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	Detail     string `json:"detail,omitempty"`
}

// SignalAction is what the tick did with a signal.
type SignalAction string

const (
	SignalConsumed SignalAction = "consumed"
	SignalBuffered SignalAction = "buffered"
	SignalRejected SignalAction = "rejected"
)

// SignalChange tells the shell how to update a signal row.
type SignalChange struct {
	Action SignalAction
	Signal Signal
	Node   string // the consuming node
}

// EventUse records that a node consumed an event (at most once).
type EventUse struct {
	EventID string
	Node    string
}

// Discard explains an input that changed nothing.
type Discard struct {
	// Seq is the run's transition count when the input was discarded.
	Seq   int64     `json:"seq"`
	At    time.Time `json:"at,omitzero"`
	Input string    `json:"input"`
	// Node is the node that refused it, when one did.
	Node   string `json:"node,omitempty"`
	Reason string `json:"reason"`
	// Code classifies the discard for metrics: one of the Discard*
	// constants, or empty.
	Code string `json:"code,omitempty"`
}

// Discard codes.
const (
	// DiscardMatchError: a node's match_expr failed on the event, which
	// counts as no match.
	DiscardMatchError = "match_error"
	// DiscardNoMatch: no waiting node of the run took the event.
	DiscardNoMatch = "no_match"
)

// Need asks for the scatter children of Scatter with index in [From, To);
// Live restricts them to non-terminal children.
type Need struct {
	Scatter string
	From    int
	To      int
	Live    bool
}
