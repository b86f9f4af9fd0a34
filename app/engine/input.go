package engine

import "time"

// Input is one durable row the shell drains for a run, in order. Decide
// validates each against the state: stale and duplicate inputs are
// discarded, not trusted.
type Input interface{ inputKind() string }

// InputNode is the node an input is about: a step's result, a timer, a
// child's update, a decision, a case's change, a node's retry or
// cancel; "" for an input about the whole run.
func InputNode(in Input) string {
	switch v := in.(type) {
	case StepResult:
		return v.Node
	case TimerFired:
		return v.Node
	case ChildRunUpdate:
		return v.Node
	case ApprovalDecided:
		return v.Node
	case CaseStatusChanged:
		return v.Node
	case RetryNode:
		return v.Node
	case CancelNode:
		return v.Node
	}
	return ""
}

// Tick is one call's inputs and environment.
type Tick struct {
	// Now is the database's now(); every time in the decision derives
	// from it.
	Now time.Time
	// Seed feeds retry jitter; the shell derives it deterministically
	// (e.g. from run id and record_version) so a replay decides the same.
	Seed uint64
	// Inputs are drained in order.
	Inputs []Input
	// MorePending tells Decide that signals or controls remain beyond
	// this batch, so a ContinueAsNew should defer (bounded).
	MorePending bool
}

// StepResult is the outcome of one attempt of a worker step (task, http
// or an inline scatter child), keyed by (node, generation, attempt).
type StepResult struct {
	Node       string
	Generation int
	Attempt    int
	// Error nil means success.
	Output any
	Error  *Error
}

// TimerFired reports a due timer by id.
type TimerFired struct {
	TimerID string
	Node    string // empty for the run timeout
}

// Signal is a durable signal row keyed by (run, request id).
type Signal struct {
	RequestID string `json:"request_id"`
	Name      string `json:"name"`
	Payload   any    `json:"payload,omitzero"`
}

// SignalReceived delivers a new signal.
type SignalReceived struct{ Signal Signal }

// EventMatched delivers a tenant event whose name a waiting node of this
// run listens for; Decide evaluates the node's match_expr.
type EventMatched struct {
	EventID string
	Name    string
	Data    any
}

// ChildRunUpdate reports a child run that reached a terminal status or a
// checkpoint.
type ChildRunUpdate struct {
	// Node is the parent node that started the child.
	Node       string
	Status     RunStatus
	Checkpoint string // set when a checkpoint was reached
	Output     any
	Error      *Error
	// ChildRunID names the child run reporting, so a late report of an
	// earlier child of the node (a previous loop iteration, an earlier run
	// of a chain that continued as new) is stale;
	// empty for a child that could not be started.
	ChildRunID string `json:",omitempty"`
	// NotStarted says the child could not be created at all (Error says
	// why: workflow_not_found, depth_exceeded).
	NotStarted bool `json:",omitempty"`
	// Successor says the child continued as new as this run: the node
	// waits for the successor from now on (Status is terminated).
	Successor string `json:",omitempty"`
}

// ApprovalDecided is one person's decision on an approval node.
type ApprovalDecided struct {
	Node     string
	Approved bool
	By       string
	Comment  string
	// Approval names the approval decided (one per node generation), so a
	// person deciding again after an operator retry is not a duplicate.
	Approval string `json:",omitempty"`
}

// CaseStatusChanged reports a human_loop case's new status.
type CaseStatusChanged struct {
	Node   string
	Status string
	Data   any
}

// Cancel is the operator's cancel control.
type Cancel struct {
	RequestID string
	Reason    string
	// By names who cancelled (user:EMAIL, key:PREFIX), recorded on the run.
	By string `json:",omitempty"`
}

// CancelNode is the operator's cancel of one running or waiting node: it
// ends cancelled with error code cancelled, and its error and done edges
// and its on_error policy apply as for a failure.
type CancelNode struct {
	RequestID string
	Node      string
	Reason    string `json:",omitempty"`
}

// RetryNode is the operator's retry-from-node control: the node and what
// failed or was cancelled downstream run again, upstream outputs are kept,
// and the re-run nodes get a new idempotency-key generation.
type RetryNode struct {
	RequestID string
	Node      string
}

// ContinueAsNew closes the run as terminated/continued_as_new and asks for
// a successor. Input nil carries the run's input forward.
type ContinueAsNew struct {
	RequestID string `json:"request_id"`
	Input     any    `json:"input,omitzero"`
}

// Terminate force-stops a run that cannot continue (e.g. its definition
// was unpublished).
type Terminate struct {
	Reason TerminateReason
}

// Admit lets a run that flow control held back start.
type Admit struct{}

func (StepResult) inputKind() string        { return "result" }
func (TimerFired) inputKind() string        { return "timer" }
func (SignalReceived) inputKind() string    { return "signal" }
func (EventMatched) inputKind() string      { return "event" }
func (ChildRunUpdate) inputKind() string    { return "child" }
func (ApprovalDecided) inputKind() string   { return "approval" }
func (CaseStatusChanged) inputKind() string { return "case" }
func (Cancel) inputKind() string            { return "cancel" }
func (RetryNode) inputKind() string         { return "retry" }
func (CancelNode) inputKind() string        { return "cancel_node" }
func (ContinueAsNew) inputKind() string     { return "continue_as_new" }
func (Terminate) inputKind() string         { return "terminate" }
func (Admit) inputKind() string             { return "admit" }
