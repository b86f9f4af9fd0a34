package engine

import (
	"maps"
	"slices"
	"time"

	"github.com/ductor/ductor/app/definition"
)

// RunStatus is a run's lifecycle status.
type RunStatus string

const (
	RunPending    RunStatus = "pending"
	RunRunning    RunStatus = "running"
	RunWaiting    RunStatus = "waiting"
	RunSucceeded  RunStatus = "succeeded"
	RunFailed     RunStatus = "failed"
	RunCancelled  RunStatus = "cancelled"
	RunTimedOut   RunStatus = "timed_out"
	RunTerminated RunStatus = "terminated"
)

// Terminal reports whether s is a final status.
func (s RunStatus) Terminal() bool {
	switch s {
	case RunSucceeded, RunFailed, RunCancelled, RunTimedOut, RunTerminated:
		return true
	}
	return false
}

// TerminateReason says why a run ended terminated.
type TerminateReason string

const (
	ReasonContinuedAsNew  TerminateReason = "continued_as_new"
	ReasonTransitionLimit TerminateReason = "transition_limit"
	// ReasonScheduleOverlap: a newer action of the schedule that started
	// the run took its place (overlap policy terminate_other).
	ReasonScheduleOverlap TerminateReason = "schedule_overlap"
)

// NodeState is a node's lifecycle state.
type NodeState string

const (
	NodePending   NodeState = "pending"
	NodeReady     NodeState = "ready"
	NodeRunning   NodeState = "running"
	NodeWaiting   NodeState = "waiting"
	NodeSucceeded NodeState = "succeeded"
	NodeFailed    NodeState = "failed"
	NodeSkipped   NodeState = "skipped"
	NodeCancelled NodeState = "cancelled"
)

// Terminal reports whether s is a final state.
func (s NodeState) Terminal() bool {
	switch s {
	case NodeSucceeded, NodeFailed, NodeSkipped, NodeCancelled:
		return true
	}
	return false
}

// WaitingType says why a node is parked.
type WaitingType string

const (
	WaitTimer       WaitingType = "timer"
	WaitApproval    WaitingType = "approval"
	WaitChild       WaitingType = "child"
	WaitSignal      WaitingType = "signal"
	WaitDigest      WaitingType = "digest"
	WaitInteraction WaitingType = "interaction"
	WaitEvent       WaitingType = "event"
	WaitEventSet    WaitingType = "event_set"
)

// EdgeMark is the resolution of one edge: every edge ends fired or dead.
type EdgeMark string

const (
	EdgeFired EdgeMark = "fired"
	EdgeDead  EdgeMark = "dead"
)

// Error is a step's or a run's failure.
type Error struct {
	Code      string `json:"code"`
	Message   string `json:"message,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
	// Node is the node whose failure failed the run (run errors only).
	Node string `json:"node,omitempty"`
}

// Error codes the engine produces or interprets.
const (
	CodeExpressionError  = "expression_error"
	CodeExpressionLimit  = "expression_limit"
	CodePayloadTooLarge  = "payload_too_large"
	CodeTimeout          = "timeout"
	CodeRejected         = "rejected"
	CodeChildFailed      = "child_failed"
	CodeTooManyChildren  = "too_many_children"
	CodeInvalidStep      = "invalid_step"
	CodeGatherRaised     = "gather_raised"
	CodeSignalBufferFull = "signal_buffer_full"
	// CodeCancelled: an operator cancelled the node (CancelNode).
	CodeCancelled = "cancelled"
	// CodeMaxIterations: a repeating subworkflow ran max_iterations
	// times without its until_expr holding.
	CodeMaxIterations = "max_iterations"
	// CodeEndRun: a step with end_run: failed ended the run.
	CodeEndRun = "end_run"
	// CodeInvalidOutput: a value a step produced cannot be stored (a NUL
	// character, a NaN or an infinity).
	CodeInvalidOutput = "invalid_output"
)

// DefaultMaxOutputBytes caps every node output, the run's output and
// every signal payload and event data, measured as JSON.
const DefaultMaxOutputBytes = 1 << 20

// nonRetryable are error codes never retried, whatever the policy says.
var nonRetryable = map[string]bool{
	CodeExpressionError: true,
	CodeExpressionLimit: true,
	CodePayloadTooLarge: true,
	CodeInvalidStep:     true,
	CodeCancelled:       true,
	CodeMaxIterations:   true,
	CodeInvalidOutput:   true,
}

// Run is the run row as the engine sees it.
type Run struct {
	ID     string    `json:"id"`
	Status RunStatus `json:"status"`
	// Reason is set when Status is terminated.
	Reason TerminateReason `json:"reason,omitempty"`
	// CancelReason and CancelledBy say why and by whom an operator
	// cancelled the run.
	CancelReason string `json:"cancel_reason,omitempty"`
	CancelledBy  string `json:"cancelled_by,omitempty"`
	// ContinuedToRunID and ContinuedFromRunID link a ContinueAsNew chain;
	// the shell sets them (it derives the successor id).
	ContinuedToRunID   string `json:"continued_to_run_id,omitempty"`
	ContinuedFromRunID string `json:"continued_from_run_id,omitempty"`
	Input              any    `json:"input,omitzero"`
	Output             any    `json:"output,omitzero"`
	Error              *Error `json:"error,omitempty"`
	// Meta is the CEL `run` variable: id, key, version, subject, context,
	// search_attributes, parent_run_id, root_run_id, depth.
	Meta map[string]any `json:"meta,omitempty"`
	// Parent links a child run to the parent node that waits for it.
	Parent *ParentLink `json:"parent,omitempty"`

	TransitionCount int64     `json:"transition_count"`
	SoftWarned      bool      `json:"soft_warned,omitempty"`
	StartedAt       time.Time `json:"started_at,omitzero"`
	FinishedAt      time.Time `json:"finished_at,omitzero"`
	// Deadline is the run timeout instant, zero when none.
	Deadline time.Time `json:"deadline,omitzero"`
	// PendingCAN is a ContinueAsNew waiting for pending inputs to drain.
	PendingCAN *ContinueAsNew `json:"pending_can,omitempty"`
	// CANDeferrals counts ticks the pending CAN has waited.
	CANDeferrals int `json:"can_deferrals,omitempty"`
	// BufferedSignals counts this run's buffered (unmatched) signals; the
	// shell keeps it in step with the rows it stores.
	BufferedSignals int `json:"buffered_signals,omitempty"`
	// Discarded keeps the latest inputs refused for a reason a user should
	// see (an event whose match_expr failed), oldest first, at most
	// MaxKeptDiscards; DiscardedTotal counts all of them.
	Discarded      []Discard `json:"discarded,omitempty"`
	DiscardedTotal int64     `json:"discarded_total,omitempty"`
	// Held marks a pending run that flow control holds back (a
	// concurrency slot, a throttle's turn, a debounce's quiet): it starts
	// on Admit, not on its first tick.
	Held bool `json:"held,omitempty"`
	// Trace is the run's place in a distributed trace; the shell sets it
	// and the engine carries it along untouched.
	Trace *TraceContext `json:"trace,omitempty"`
}

// TraceContext is a run's span in W3C Trace Context form: Parent is the
// traceparent naming the run's span, State its tracestate, and Caller the
// span id of what started the run (a caller's span or the parent run's),
// empty for a run that began its own trace.
type TraceContext struct {
	Parent string `json:"traceparent"`
	State  string `json:"tracestate,omitempty"`
	Caller string `json:"caller,omitempty"`
}

// MaxKeptDiscards bounds Run.Discarded.
const MaxKeptDiscards = 20

// ParentLink names the parent node a child run reports to.
type ParentLink struct {
	RunID string `json:"run_id"`
	Node  string `json:"node"`
	// Sync parents wait; async ones are not notified.
	Sync bool `json:"sync"`
}

// Node is one node of a run: a manifest step, or a scatter child named
// REF[KEY].
type Node struct {
	ID    string    `json:"id"`
	Ref   string    `json:"ref"`
	State NodeState `json:"state"`
	// Outcome is the terminal outcome edges fire on (success, error,
	// true, false, approved, rejected); empty while not terminal.
	Outcome definition.Outcome `json:"outcome,omitempty"`
	Output  any                `json:"output,omitzero"`
	Error   *Error             `json:"error,omitempty"`
	// Attempt is the current (or last) attempt number, counted from 1 in
	// each generation.
	Attempt int `json:"attempt"`
	// Generation counts operator retries; it suffixes the idempotency key.
	Generation int `json:"generation"`
	// Retry counts operator retries of a scatter child on its own, within
	// its scatter's generation; it suffixes the idempotency key too.
	Retry int `json:"retry,omitempty"`
	// Inbound holds the resolution of each incoming edge by EdgeID.
	Inbound map[string]EdgeMark `json:"inbound,omitempty"`
	Waiting *Waiting            `json:"waiting,omitempty"`
	Scatter *ScatterState       `json:"scatter,omitempty"`
	// Child is set on scatter children.
	Child *ChildInfo `json:"child,omitempty"`
	// CancelReason says why a cancelled node was cancelled: by an
	// operator, by a cancel_rest join, by its scatter's early completion,
	// by an end_run step.
	CancelReason string `json:"cancel_reason,omitempty"`

	ReadyAt    time.Time `json:"ready_at,omitzero"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// ChildInfo places a scatter child in its scatter.
type ChildInfo struct {
	Scatter string `json:"scatter"`
	Index   int    `json:"index"`
	Key     string `json:"key"`
	Item    any    `json:"item,omitzero"`
}

// Waiting records why a node is parked and what wakes it.
type Waiting struct {
	Type WaitingType `json:"type"`
	// TimerID is the live timer of the node (wake or timeout); a fired
	// timer with another id is stale.
	TimerID string    `json:"timer_id,omitempty"`
	Until   time.Time `json:"until,omitzero"`
	// Name is the signal, event or digest name; Events an event_set's
	// member names (each once).
	Name   string   `json:"name,omitempty"`
	Events []string `json:"events,omitempty"`
	// ChildKey names the child run (the shell derives its id from it).
	ChildKey string `json:"child_key,omitempty"`
	// ChildRunID is the child run waited for: the one ChildKey names, or,
	// once that child continued as new, the latest successor of its
	// chain. Empty in states recorded before it was kept.
	ChildRunID string `json:"child_run_id,omitempty"`
	// Received holds an event_set's events by member key; Items a
	// digest's, with ItemsBytes their size as JSON.
	Received   map[string]any `json:"received,omitempty"`
	Items      []any          `json:"items,omitempty"`
	ItemsBytes int            `json:"items_bytes,omitempty"`
	// Approvals counts approve decisions so far.
	Approvals int `json:"approvals,omitempty"`
	// Iteration is the running iteration of a repeating subworkflow,
	// from 1.
	Iteration int `json:"iteration,omitempty"`
}

// ScatterState is a scatter node's aggregate: the tick handling one child
// needs this and that child, never all children.
type ScatterState struct {
	Total     int `json:"total"`
	Next      int `json:"next"` // next child index to dispatch
	InFlight  int `json:"in_flight"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	// LastDispatch spaces dispatches by interval_ms.
	LastDispatch time.Time `json:"last_dispatch,omitzero"`
	// Checked is how many children had finished when complete_when was
	// last evaluated; CompletedEarly is set once it held, and Cancelled
	// counts the unfinished children that completion cancelled.
	Checked        int  `json:"checked,omitempty"`
	CompletedEarly bool `json:"completed_early,omitempty"`
	Cancelled      int  `json:"cancelled,omitempty"`
}

// Done reports whether every child is terminal.
func (s *ScatterState) Done() bool { return s.Succeeded+s.Failed == s.Total }

// Attempt is the record of one attempt of one node.
type Attempt struct {
	Node string `json:"node"`
	// Type is the step type the attempt executed (a scatter child's is its
	// template's), which usage counts steps by.
	Type       string    `json:"type,omitempty"`
	Generation int       `json:"generation"`
	Attempt    int       `json:"attempt"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Output     any       `json:"output,omitzero"`
	Error      *Error    `json:"error,omitempty"`
}

// State is what the shell loaded for one tick: the run row, every node of
// a manifest step, and only those scatter children the inputs name (or a
// previous Decision asked for in Needs).
type State struct {
	Run   Run
	Nodes map[string]*Node
	// Signals are the run's buffered signals, oldest first.
	Signals []Signal
}

// Clone returns a deep enough copy that mutating the clone's nodes leaves
// the original untouched.
func (n *Node) Clone() *Node {
	c := *n
	c.Inbound = maps.Clone(n.Inbound)
	if n.Waiting != nil {
		w := *n.Waiting
		w.Received = maps.Clone(n.Waiting.Received)
		w.Items = slices.Clone(n.Waiting.Items)
		c.Waiting = &w
	}
	if n.Scatter != nil {
		s := *n.Scatter
		c.Scatter = &s
	}
	if n.Child != nil {
		ch := *n.Child
		c.Child = &ch
	}
	return &c
}

// Apply folds a decision into the state, as the shell's persistence does.
func (s *State) Apply(d *Decision) {
	s.Run = d.Run
	if s.Nodes == nil {
		s.Nodes = map[string]*Node{}
	}
	for _, n := range d.Nodes {
		s.Nodes[n.ID] = n.Clone()
	}
	s.Signals = applySignals(s.Signals, d.Signals)
}

func applySignals(buf []Signal, changes []SignalChange) []Signal {
	for _, c := range changes {
		switch c.Action {
		case SignalBuffered:
			buf = append(buf, c.Signal)
		case SignalConsumed:
			buf = slices.DeleteFunc(buf, func(s Signal) bool { return s.RequestID == c.Signal.RequestID })
		}
	}
	return buf
}
