package engine

import "time"

// Command is a side effect the shell performs in the tick's transaction
// (insert a job, a timer, an approval row…). Commands are plain data.
type Command interface{ commandKind() string }

// DispatchAttempt asks for a step-task job executing one attempt.
type DispatchAttempt struct {
	Node       string
	Ref        string
	Type       string
	Generation int
	Attempt    int
	// RunAt is when the job may start (later than now for a retry).
	RunAt time.Time
	// IdempotencyKey names the logical operation: {run_id}:{node}, plus
	// :g{N} after the N-th operator retry. Same for automatic retries.
	IdempotencyKey string
	// Params is the step's `with`, each *_expr field replaced by its
	// evaluated value under the name without the suffix (input_expr →
	// input, url_expr → url, body_expr → body).
	Params    map[string]any
	TimeoutMS int64
	// FlowKey is the key of the step's concurrency pool, FlowLimit the
	// most attempts of that key that may run at once (the step's or its
	// template's concurrency); empty when it has none.
	FlowKey   string `json:",omitempty"`
	FlowLimit int    `json:",omitempty"`
}

// CancelAttempt asks the worker of a running attempt to stop.
type CancelAttempt struct {
	Node       string
	Generation int
	Attempt    int
}

// ScheduleTimer inserts a durable timer that wakes the run at FireAt.
type ScheduleTimer struct {
	TimerID string
	Node    string // empty for the run timeout
	FireAt  time.Time
}

// CancelTimer deletes a timer that is no longer needed. Firing it anyway
// is harmless: Decide discards stale timers.
type CancelTimer struct{ TimerID string }

// OpenApproval creates an approval request for the inbox.
type OpenApproval struct {
	Node         string
	Key          string
	Approvers    []string
	Title        string
	Description  string
	MinApprovals int
	ExpiresAt    time.Time
}

// OpenCase creates a human_loop case.
type OpenCase struct {
	Node           string
	Key            string
	Title          string
	Assignees      []string
	Fields         any
	AwaitingStatus string
}

// CloseInteraction withdraws an approval or case whose node ended
// otherwise (timeout, cancellation).
type CloseInteraction struct {
	Node string
	Key  string
}

// StartChildRun creates a child run; its id is derived by the shell from
// Key, so a re-executed tick starts nothing twice.
type StartChildRun struct {
	Node     string
	Key      string
	Workflow string
	Version  int
	Input    any
	Sync     bool
	WaitFor  string
}

// CancelChildRun cancels a sync child run: RunID when set (the latest
// successor of a child that continued as new), else the run Key names.
// The shell follows the chain further to a successor the parent has not
// heard of yet. Reason is the child's cancel reason: "parent cancelled"
// only when the parent run was cancelled.
type CancelChildRun struct {
	Node   string
	Key    string
	RunID  string
	Reason string
}

// NotifyParent wakes the parent run of a sync child with a
// ChildRunUpdate. Successor is set when the child continued as new: the
// parent waits for that run instead.
type NotifyParent struct {
	Parent     ParentLink
	Status     RunStatus
	Checkpoint string
	Output     any
	Error      *Error
	Successor  string
}

// StartSuccessor creates the ContinueAsNew successor run. The shell
// derives its id from (run id, request id), sets continued_to_run_id on
// this run and continued_from_run_id on the successor, and moves buffered
// signals to it.
type StartSuccessor struct {
	RequestID string
	Input     any
}

// Warn records an operator-visible warning (soft transition limit).
type Warn struct {
	Code    string
	Message string
}

func (DispatchAttempt) commandKind() string  { return "dispatch" }
func (CancelAttempt) commandKind() string    { return "cancel_attempt" }
func (ScheduleTimer) commandKind() string    { return "schedule_timer" }
func (CancelTimer) commandKind() string      { return "cancel_timer" }
func (OpenApproval) commandKind() string     { return "open_approval" }
func (OpenCase) commandKind() string         { return "open_case" }
func (CloseInteraction) commandKind() string { return "close_interaction" }
func (StartChildRun) commandKind() string    { return "start_child" }
func (CancelChildRun) commandKind() string   { return "cancel_child" }
func (NotifyParent) commandKind() string     { return "notify_parent" }
func (StartSuccessor) commandKind() string   { return "start_successor" }
func (Warn) commandKind() string             { return "warn" }
