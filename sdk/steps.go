package sdk

import "time"

// Typed settings of the fifteen step types, and a builder for each. A
// zero field is left out, so the server's default applies (see the step
// reference, docs/steps.md). Fields named *Expr are CEL expressions.

// TaskWith runs a named handler: a Go handler of the server, or one a
// [Worker] registers.
type TaskWith struct {
	Handler string `json:"handler"`
	// Queue sends it to the workers of another queue than "default".
	Queue     string `json:"queue"`
	InputExpr string `json:"input_expr"` // default: the run input
	// ScheduleToStart is how long the task may wait for a worker before
	// it fails with no_worker (default: the tenant's, else 5m).
	ScheduleToStart time.Duration `json:"schedule_to_start"`
	// Secrets names the tenant secrets the worker receives with the task
	// (Task.Secrets), never part of its input.
	Secrets []string `json:"secrets"`
}

// TaskStep is a task step.
func TaskStep(ref string, w TaskWith) Step { return NewStep(ref, TypeTask, w) }

// HTTPWith is one HTTP request; set URL or URLExpr, and Body or BodyExpr.
type HTTPWith struct {
	URL     string            `json:"url"`
	URLExpr string            `json:"url_expr"`
	Method  string            `json:"method"` // default GET
	Headers map[string]string `json:"headers"`
	// HeadersExpr computes the headers (a map of strings); like URLExpr
	// and BodyExpr it may reference tenant secrets: secret("NAME").
	HeadersExpr string `json:"headers_expr"`
	// Auth sends a tenant secret as the Authorization header.
	Auth     *HTTPAuth `json:"auth"`
	Body     any       `json:"body"`
	BodyExpr string    `json:"body_expr"`
	// ExpectStatus lists the statuses that succeed (default: any 2xx).
	ExpectStatus []int `json:"expect_status"`
}

// HTTPAuth is an http step's auth shorthand: set Bearer or Basic, each
// naming a tenant secret.
type HTTPAuth struct {
	Bearer string     `json:"bearer,omitempty"` // sends "Bearer VALUE"
	Basic  *BasicAuth `json:"basic,omitempty"`
}

// BasicAuth is HTTP Basic authentication with a secret as the password.
type BasicAuth struct {
	User     string `json:"user"`
	Password string `json:"password"` // the secret's name
}

// HTTPStep is an http step.
func HTTPStep(ref string, w HTTPWith) Step { return NewStep(ref, TypeHTTP, w) }

// TransformStep evaluates an expression; its value is the output.
func TransformStep(ref, expr string) Step {
	return NewStep(ref, TypeTransform, With{"expr": expr})
}

// ConditionStep evaluates a boolean and ends true or false: follow it
// with On(ref, …, OutcomeTrue) and On(ref, …, OutcomeFalse).
func ConditionStep(ref, expr string) Step {
	return NewStep(ref, TypeCondition, With{"expr": expr})
}

// Template is a scatter's `do`: the task, http or transform step each
// inline child runs.
type Template struct {
	Type        StepType         `json:"type"`
	With        any              `json:"with"` // TaskWith, HTTPWith, or With{"expr": …}
	Timeout     time.Duration    `json:"timeout"`
	Retry       *Retry           `json:"retry"`
	Concurrency *StepConcurrency `json:"concurrency"`
}

// ScatterWith starts one child per element of ItemsExpr: inline (Do) or
// child runs (Mode "child_workflow", Workflow).
type ScatterWith struct {
	ItemsExpr         string    `json:"items_expr"`
	KeyExpr           string    `json:"key_expr"`
	Mode              string    `json:"mode"` // inline (default) or child_workflow
	Do                *Template `json:"do"`
	Workflow          string    `json:"workflow"`
	Version           int       `json:"version"`
	InputExpr         string    `json:"input_expr"`
	MaxInlineChildren int       `json:"max_inline_children"`
	Concurrency       int       `json:"concurrency"`
	IntervalMS        int       `json:"interval_ms"`
	// CompleteWhen ends the scatter early once it holds, cancelling the
	// children still running (succeeded, failed, done, total and results
	// in scope).
	CompleteWhen string `json:"complete_when"`
}

// ScatterStep is a scatter step.
func ScatterStep(ref string, w ScatterWith) Step { return NewStep(ref, TypeScatter, w) }

// GatherStep collapses the children of the scatter scatterRef;
// strategy is partition (""), include, drop or raise.
func GatherStep(ref, scatterRef, strategy string) Step {
	return NewStep(ref, TypeGather, struct {
		ScatterRef string `json:"scatter_ref"`
		Strategy   string `json:"strategy"`
	}{scatterRef, strategy})
}

// SubworkflowWith starts a child run of Workflow.
type SubworkflowWith struct {
	Workflow  string `json:"workflow"`
	Version   int    `json:"version"` // default: the latest
	Mode      string `json:"mode"`    // sync (default) or async
	WaitFor   string `json:"wait_for"`
	InputExpr string `json:"input_expr"`
	// Timeout and OnTimeout (fail_parent, detach, continue_with_error)
	// apply in sync mode.
	Timeout   time.Duration `json:"timeout"`
	OnTimeout string        `json:"on_timeout"`
	// Repeat runs the child again and again (sync mode) until its
	// UntilExpr holds, at most MaxIterations times.
	Repeat *Repeat `json:"repeat"`
}

// Repeat is a subworkflow loop; InputExpr is each next iteration's input.
type Repeat struct {
	UntilExpr     string `json:"until_expr"`
	MaxIterations int    `json:"max_iterations"`
	InputExpr     string `json:"input_expr"`
}

// SubworkflowStep is a subworkflow step.
func SubworkflowStep(ref string, w SubworkflowWith) Step {
	return NewStep(ref, TypeSubworkflow, w)
}

// CheckpointStep marks a named point a parent can wait for
// (`wait_for: checkpoint:NAME`); outputExpr may be empty.
func CheckpointStep(ref, name, outputExpr string) Step {
	return NewStep(ref, TypeCheckpoint, struct {
		Name       string `json:"name"`
		OutputExpr string `json:"output_expr"`
	}{name, outputExpr})
}

// WaitWith says when a wait step fires: exactly one of Duration, Until,
// Cron (with Timezone) or UntilExpr.
type WaitWith struct {
	Duration  time.Duration `json:"duration"`
	Until     time.Time     `json:"until"`
	Cron      string        `json:"cron"`
	Timezone  string        `json:"timezone"`
	UntilExpr string        `json:"until_expr"`
}

// WaitStep is a wait step.
func WaitStep(ref string, w WaitWith) Step { return NewStep(ref, TypeWait, w) }

// SignalWith waits for a signal named Name sent to the run.
type SignalWith struct {
	Name      string        `json:"name"`
	Timeout   time.Duration `json:"timeout"`
	OnTimeout string        `json:"on_timeout"` // fail (default) or skip
}

// SignalStep is a signal step.
func SignalStep(ref string, w SignalWith) Step { return NewStep(ref, TypeSignal, w) }

// EventWith waits for a tenant event named Name matching MatchExpr.
type EventWith struct {
	Name      string        `json:"name"`
	MatchExpr string        `json:"match_expr"`
	Timeout   time.Duration `json:"timeout"`
	OnTimeout string        `json:"on_timeout"` // fail (default) or skip
}

// EventStep is an event step.
func EventStep(ref string, w EventWith) Step { return NewStep(ref, TypeEvent, w) }

// EventMember is one event of an event set.
type EventMember struct {
	Name      string `json:"name"`
	MatchExpr string `json:"match_expr"`
	// Key identifies the member and keys the output (default: the name,
	// or NAME#INDEX when another member has the same name).
	Key string `json:"key"`
}

// EventSetWith waits for a correlated set of events.
type EventSetWith struct {
	Events []EventMember `json:"events"`
	// Policy is all_required (default), any, quorum, count (N of them)
	// or until_timeout.
	Policy    string        `json:"policy"`
	N         int           `json:"n"`
	Timeout   time.Duration `json:"timeout"`
	OnTimeout string        `json:"on_timeout"` // fail (default) or succeed_partial
}

// EventSetStep is an event_set step.
func EventSetStep(ref string, w EventSetWith) Step { return NewStep(ref, TypeEventSet, w) }

// DigestWith collects the events named Name for Window.
type DigestWith struct {
	Name      string        `json:"name"`
	MatchExpr string        `json:"match_expr"`
	Window    time.Duration `json:"window"`
	MaxItems  int           `json:"max_items"`
}

// DigestStep is a digest step.
func DigestStep(ref string, w DigestWith) Step { return NewStep(ref, TypeDigest, w) }

// ApprovalWith waits for people (emails, role:NAME) to approve.
type ApprovalWith struct {
	Approvers    []string      `json:"approvers"`
	Title        string        `json:"title"`
	Description  string        `json:"description"`
	MinApprovals int           `json:"min_approvals"`
	Timeout      time.Duration `json:"timeout"`
	OnTimeout    string        `json:"on_timeout"` // fail (default), approve or skip
}

// ApprovalStep is an approval step; it ends approved or rejected.
func ApprovalStep(ref string, w ApprovalWith) Step { return NewStep(ref, TypeApproval, w) }

// HumanLoopWith opens a case for people to work.
type HumanLoopWith struct {
	Title     string   `json:"title"`
	Assignees []string `json:"assignees"`
	// Fields is a JSON Schema of the case's data.
	Fields         any           `json:"fields"`
	AwaitingStatus string        `json:"awaiting_status"` // default resolved
	Timeout        time.Duration `json:"timeout"`
	OnTimeout      string        `json:"on_timeout"` // fail (default) or skip
}

// HumanLoopStep is a human_loop step.
func HumanLoopStep(ref string, w HumanLoopWith) Step { return NewStep(ref, TypeHumanLoop, w) }
