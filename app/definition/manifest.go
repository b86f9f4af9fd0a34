package definition

import (
	"encoding/json"
	"sort"
)

// Manifest is a compiled, validated definition: the immutable plan a run
// executes. Every default is explicit, steps are sorted by ref and edges are
// sorted, so its canonical JSON (RFC 8785) is stable and its SHA-256 is the
// version's manifest hash.
type Manifest struct {
	Key         string          `json:"key"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputExpr is the run's output CEL expression; empty means the map of
	// sink-node outputs by ref.
	OutputExpr string `json:"output_expr,omitempty"`
	// TimeoutMS is the run timeout in milliseconds; 0 means none.
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
	Limits    Limits `json:"limits"`
	Steps     []Step `json:"steps"`
	Edges     []Edge `json:"edges"`
	// Entrypoints are the refs with no incoming edge, sorted.
	Entrypoints []string `json:"entrypoints"`
	// Order is the Kahn topological order, ties broken by ref.
	Order []string `json:"order"`
	// Triggers are the schedules and event triggers that start runs.
	Triggers []Trigger `json:"triggers,omitempty"`
	// Concurrency, Debounce, Throttle and RateLimit control how runs
	// start, per key (flow_rules.go).
	Concurrency []ConcurrencyRule `json:"concurrency,omitempty"`
	Debounce    *Debounce         `json:"debounce,omitempty"`
	Throttle    *Rate             `json:"throttle,omitempty"`
	RateLimit   *Rate             `json:"rate_limit,omitempty"`
}

// Limits are per-definition limits, each already clamped to the server
// maximum and defaulted.
type Limits struct {
	MaxInlineChildren    int `json:"max_inline_children"`
	TransitionsSoft      int `json:"transitions_soft"`
	TransitionsHard      int `json:"transitions_hard"`
	TransitionsTerminate int `json:"transitions_terminate"`
}

// Step is one compiled node of the graph.
type Step struct {
	Ref  string   `json:"ref"`
	Type StepType `json:"type"`
	Name string   `json:"name,omitempty"`
	// With holds the type's settings, normalised: defaults filled in,
	// durations in milliseconds (fields suffixed _ms), no unknown fields.
	// The keys of each type are listed in the package documentation.
	With    map[string]any `json:"with"`
	RunIf   string         `json:"run_if,omitempty"`
	ForEach string         `json:"for_each,omitempty"`
	Join    Join           `json:"join"`
	// JoinAtLeast is N of join at_least (N ≥ 2); JoinCancelRest cancels
	// the unfinished predecessors once the join is ready.
	JoinAtLeast    int  `json:"join_at_least,omitempty"`
	JoinCancelRest bool `json:"join_cancel_rest,omitempty"`
	// EndRun ends the run with that status once the step succeeds.
	EndRun  RunEnd      `json:"end_run,omitempty"`
	OnError OnError     `json:"on_error"`
	Retry   RetryPolicy `json:"retry"`
	// TimeoutMS is the per-attempt timeout (task, http); 0 means none.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// Concurrency bounds the step's attempts running at once per key,
	// across the tenant (task, http).
	Concurrency *StepConcurrency `json:"concurrency,omitempty"`
}

// Step returns the step with the given ref.
func (m *Manifest) Step(ref string) (*Step, bool) {
	i := sort.Search(len(m.Steps), func(i int) bool { return m.Steps[i].Ref >= ref })
	if i < len(m.Steps) && m.Steps[i].Ref == ref {
		return &m.Steps[i], true
	}
	return nil, false
}

// RetryPolicy is a step's explicit retry policy. MaxAttempts 1 means no retry.
type RetryPolicy struct {
	MaxAttempts        int     `json:"max_attempts"`
	InitialIntervalMS  int64   `json:"initial_interval_ms"`
	BackoffCoefficient float64 `json:"backoff_coefficient"`
	MaxIntervalMS      int64   `json:"max_interval_ms"`
	Jitter             bool    `json:"jitter"`
}

// Edge connects two steps. Edges of a choice group carry Choice and have On
// set to OutcomeSuccess; they are evaluated in Choice.Index order.
type Edge struct {
	From   string  `json:"from"`
	To     string  `json:"to"`
	On     Outcome `json:"on"`
	Choice *Branch `json:"choice,omitempty"`
}

// Branch is an edge's place in its source's choice group.
type Branch struct {
	Index   int    `json:"index"`
	When    string `json:"when,omitempty"`
	Default bool   `json:"default,omitempty"`
}

// StepType is one of the fifteen canonical step types.
type StepType string

const (
	TypeTask        StepType = "task"
	TypeHTTP        StepType = "http"
	TypeTransform   StepType = "transform"
	TypeCondition   StepType = "condition"
	TypeScatter     StepType = "scatter"
	TypeGather      StepType = "gather"
	TypeSubworkflow StepType = "subworkflow"
	TypeCheckpoint  StepType = "checkpoint"
	TypeWait        StepType = "wait"
	TypeSignal      StepType = "signal"
	TypeEvent       StepType = "event"
	TypeEventSet    StepType = "event_set"
	TypeDigest      StepType = "digest"
	TypeApproval    StepType = "approval"
	TypeHumanLoop   StepType = "human_loop"
)

// Outcome names the terminal result of a step that an edge fires on.
type Outcome string

const (
	OutcomeSuccess  Outcome = "success"
	OutcomeError    Outcome = "error"
	OutcomeTrue     Outcome = "true"
	OutcomeFalse    Outcome = "false"
	OutcomeApproved Outcome = "approved"
	OutcomeRejected Outcome = "rejected"
	OutcomeDone     Outcome = "done"
)

// Join decides when a step with several predecessors becomes runnable.
type Join string

const (
	JoinAll Join = "all"
	JoinAny Join = "any"
	// JoinAtLeast: ready once Step.JoinAtLeast incoming edges fired.
	JoinAtLeast Join = "at_least"
)

// OnError decides what a failed step does to its run.
type OnError string

const (
	OnErrorFail     OnError = "fail"
	OnErrorContinue OnError = "continue"
)
