package definition

// The authored document, as Go values. Marshalled with encoding/json, a
// Definition is exactly the JSON document a user would write, so Go code
// (the bridge SDK) and JSON or YAML files share one format:
//
//	d := definition.Definition{
//		Key: "order-fulfilment",
//		Steps: []definition.StepDef{
//			definition.Transform("validate", `{"ok": input.amount > 0}`),
//			definition.Task("charge", "payments.charge").WithRetry(definition.RetryDef{MaxAttempts: 5}),
//		},
//		Edges: []definition.EdgeDef{definition.Then("validate", "charge")},
//	}
//
// Settings that differ per step type live in With, keyed as in the
// document ("items_expr", "timeout", …).

// Definition is a workflow definition document.
type Definition struct {
	Key         string `json:"key"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema (2020-12): a map, a bool or a
	// json.RawMessage.
	InputSchema any        `json:"input_schema,omitempty"`
	OutputExpr  string     `json:"output_expr,omitempty"`
	Timeout     string     `json:"timeout,omitempty"`
	Limits      *LimitsDef `json:"limits,omitempty"`
	Steps       []StepDef  `json:"steps"`
	Edges       []EdgeDef  `json:"edges,omitempty"`
	// Triggers are written as in a document: {"schedule": {…}} or
	// {"event": NAME, "filter_expr": …, "input_expr": …}.
	Triggers []map[string]any `json:"triggers,omitempty"`
}

// LimitsDef lowers the server's limits for one definition.
type LimitsDef struct {
	MaxInlineChildren    int `json:"max_inline_children,omitempty"`
	TransitionsSoft      int `json:"transitions_soft,omitempty"`
	TransitionsHard      int `json:"transitions_hard,omitempty"`
	TransitionsTerminate int `json:"transitions_terminate,omitempty"`
}

// With holds a step's type-specific settings.
type With map[string]any

// StepDef is one authored step.
type StepDef struct {
	Ref     string   `json:"ref"`
	Type    StepType `json:"type"`
	Name    string   `json:"name,omitempty"`
	With    With     `json:"with,omitempty"`
	RunIf   string   `json:"run_if,omitempty"`
	ForEach string   `json:"for_each,omitempty"`
	// Join is JoinAll (the default), JoinAny or an [AtLeast].
	Join    any     `json:"join,omitempty"`
	OnError OnError `json:"on_error,omitempty"`
	// EndRun ends the run with this status once the step succeeds.
	EndRun  RunEnd    `json:"end_run,omitempty"`
	Retry   *RetryDef `json:"retry,omitempty"`
	Timeout string    `json:"timeout,omitempty"`
}

// RetryDef overrides parts of a task or http step's retry policy; zero
// fields keep their defaults.
type RetryDef struct {
	MaxAttempts        int     `json:"max_attempts,omitempty"`
	InitialInterval    string  `json:"initial_interval,omitempty"`
	BackoffCoefficient float64 `json:"backoff_coefficient,omitempty"`
	MaxInterval        string  `json:"max_interval,omitempty"`
	Jitter             *bool   `json:"jitter,omitempty"`
}

// EdgeDef is an edge, or with Choice a choice group.
type EdgeDef struct {
	From   string      `json:"from"`
	To     string      `json:"to,omitempty"`
	On     Outcome     `json:"on,omitempty"`
	Choice []ChoiceDef `json:"choice,omitempty"`
}

// ChoiceDef is one branch of a choice group.
type ChoiceDef struct {
	When    string `json:"when,omitempty"`
	Default bool   `json:"default,omitempty"`
	To      string `json:"to"`
}

// NewStep returns a step of type t.
func NewStep(ref string, t StepType, with With) StepDef {
	return StepDef{Ref: ref, Type: t, With: with}
}

// Task runs handler on a step worker.
func Task(ref, handler string) StepDef {
	return NewStep(ref, TypeTask, With{"handler": handler})
}

// HTTP requests url with method.
func HTTP(ref, method, url string) StepDef {
	return NewStep(ref, TypeHTTP, With{"method": method, "url": url})
}

// Transform evaluates a CEL expression.
func Transform(ref, expr string) StepDef {
	return NewStep(ref, TypeTransform, With{"expr": expr})
}

// Condition evaluates a CEL bool; follow it with On(…, OutcomeTrue) and
// On(…, OutcomeFalse) edges.
func Condition(ref, expr string) StepDef {
	return NewStep(ref, TypeCondition, With{"expr": expr})
}

// Wait parks for a duration ("90s", "PT1H").
func Wait(ref, duration string) StepDef {
	return NewStep(ref, TypeWait, With{"duration": duration})
}

// Signal parks until a signal called name arrives.
func Signal(ref, name string) StepDef {
	return NewStep(ref, TypeSignal, With{"name": name})
}

// Set returns s with key set in its With.
func (s StepDef) Set(key string, value any) StepDef {
	w := make(With, len(s.With)+1)
	for k, v := range s.With {
		w[k] = v
	}
	w[key] = value
	s.With = w
	return s
}

// WithRetry returns s with a retry policy.
func (s StepDef) WithRetry(r RetryDef) StepDef {
	s.Retry = &r
	return s
}

// Then is a success edge.
func Then(from, to string) EdgeDef { return EdgeDef{From: from, To: to} }

// On is an edge firing on outcome.
func On(from, to string, outcome Outcome) EdgeDef {
	return EdgeDef{From: from, To: to, On: outcome}
}

// Choose is a choice group: branches in order, the last one a default.
func Choose(from string, branches ...ChoiceDef) EdgeDef {
	return EdgeDef{From: from, Choice: branches}
}

// When is a choice branch taken when cond holds.
func When(cond, to string) ChoiceDef { return ChoiceDef{When: cond, To: to} }

// Otherwise is a choice group's default branch.
func Otherwise(to string) ChoiceDef { return ChoiceDef{Default: true, To: to} }
