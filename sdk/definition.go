package sdk

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// The definition model, as small Go types of the SDK's own: a value built
// here marshals to exactly the JSON document a user would write in a
// file, so the server compiles both the same. Durations are
// time.Duration; they marshal as Go duration strings ("1m30s").

// Definition is a workflow definition document.
type Definition struct {
	Key         string `json:"key"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema (2020-12) the trigger input must
	// match: a map, a bool or a json.RawMessage.
	InputSchema any `json:"input_schema,omitempty"`
	// OutputExpr is the run's output (default: the sink steps' outputs
	// by ref).
	OutputExpr string        `json:"output_expr,omitempty"`
	Timeout    time.Duration `json:"-"`
	Limits     *Limits       `json:"limits,omitempty"`
	// Triggers start runs without a caller: schedules and events (see
	// docs/triggers.md).
	Triggers []Trigger `json:"triggers,omitempty"`
	// Flow control of the definition's starts (see docs/flow-control.md).
	Concurrency []Concurrency `json:"concurrency,omitempty"`
	RateLimit   *Rate         `json:"rate_limit,omitempty"`
	Throttle    *Rate         `json:"throttle,omitempty"`
	Debounce    *Debounce     `json:"debounce,omitempty"`
	Steps       []Step        `json:"steps"`
	Edges       []Edge        `json:"edges,omitempty"`
	// Layout is where the dashboard's editor draws the steps placed by
	// hand, by ref; the compiler ignores it.
	Layout map[string]Point `json:"layout,omitempty"`
}

// Point is a step's place in the editor's drawing.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// MarshalJSON writes the document, Timeout as a duration string.
func (d Definition) MarshalJSON() ([]byte, error) {
	type plain Definition
	return json.Marshal(struct {
		plain
		Timeout string `json:"timeout,omitempty"`
	}{plain(d), durationString(d.Timeout)})
}

// Limits lowers the server's limits for one definition; zero fields keep
// the server's.
type Limits struct {
	MaxInlineChildren    int `json:"max_inline_children,omitempty"`
	TransitionsSoft      int `json:"transitions_soft,omitempty"`
	TransitionsHard      int `json:"transitions_hard,omitempty"`
	TransitionsTerminate int `json:"transitions_terminate,omitempty"`
}

// StepType names one of the fifteen step types.
type StepType string

// The step types.
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

// Outcome names the outcome an edge fires on.
type Outcome string

// The outcomes.
const (
	OutcomeSuccess  Outcome = "success"
	OutcomeError    Outcome = "error"
	OutcomeTrue     Outcome = "true"
	OutcomeFalse    Outcome = "false"
	OutcomeApproved Outcome = "approved"
	OutcomeRejected Outcome = "rejected"
	OutcomeDone     Outcome = "done"
)

// With holds a step's type-specific settings, keyed as in the document.
// The step builders fill it from their typed settings.
type With map[string]any

// Step is one step of a definition. Build one with the step builders
// (TaskStep, HTTPStep, …) and refine it with its methods.
type Step struct {
	Ref     string   `json:"ref"`
	Type    StepType `json:"type"`
	Name    string   `json:"name,omitempty"`
	With    With     `json:"with,omitempty"`
	RunIf   string   `json:"run_if,omitempty"`
	ForEach string   `json:"for_each,omitempty"`
	// Join is all (the default) or any; JoinAtLeast, when set, is a
	// partial join instead.
	Join        string       `json:"-"`
	JoinAtLeast *PartialJoin `json:"-"`
	OnError     string       `json:"on_error,omitempty"`
	// EndRun ends the run with this status (succeeded or failed) once
	// the step succeeds, cancelling the rest.
	EndRun string `json:"end_run,omitempty"`
	// Concurrency bounds the step's attempts running at once for a key,
	// across the tenant's runs (task and http steps).
	Concurrency *StepConcurrency `json:"concurrency,omitempty"`
	Retry       *Retry           `json:"retry,omitempty"`
	Timeout     time.Duration    `json:"-"`
}

// MarshalJSON writes the step, Timeout as a duration string and Join as
// a string or a partial join.
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step
	var join any
	switch {
	case s.JoinAtLeast != nil:
		join = s.JoinAtLeast
	case s.Join != "":
		join = s.Join
	}
	return json.Marshal(struct {
		plain
		Join    any    `json:"join,omitempty"`
		Timeout string `json:"timeout,omitempty"`
	}{plain(s), join, durationString(s.Timeout)})
}

// PartialJoin makes a step ready once AtLeast of its incoming edges
// fired; CancelRest cancels its unfinished predecessors then.
type PartialJoin struct {
	AtLeast    int  `json:"at_least"`
	CancelRest bool `json:"cancel_rest,omitempty"`
}

// StepConcurrency is a shared pool of attempts: at most Limit (or the
// int expression LimitExpr) run at once for the key KeyExpr evaluates to.
type StepConcurrency struct {
	KeyExpr   string
	Limit     int
	LimitExpr string
}

// MarshalJSON writes the pool, its limit a number or an expression.
func (c StepConcurrency) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"key_expr": c.KeyExpr, "limit": limitValue(c.Limit, c.LimitExpr)})
}

func limitValue(n int, expr string) any {
	if expr != "" {
		return expr
	}
	return n
}

// Retry overrides parts of a task or http step's retry policy; zero
// fields keep the defaults (3 attempts, 1s, ×2, at most 1m, jitter).
type Retry struct {
	MaxAttempts        int
	InitialInterval    time.Duration
	BackoffCoefficient float64
	MaxInterval        time.Duration
	// Jitter, when set, turns jitter on or off.
	Jitter *bool
}

// MarshalJSON writes the policy as the document spells it.
func (r Retry) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		MaxAttempts        int     `json:"max_attempts,omitempty"`
		InitialInterval    string  `json:"initial_interval,omitempty"`
		BackoffCoefficient float64 `json:"backoff_coefficient,omitempty"`
		MaxInterval        string  `json:"max_interval,omitempty"`
		Jitter             *bool   `json:"jitter,omitempty"`
	}{r.MaxAttempts, durationString(r.InitialInterval), r.BackoffCoefficient, durationString(r.MaxInterval), r.Jitter})
}

// Edge is an edge, or with Choice a choice group.
type Edge struct {
	From   string   `json:"from"`
	To     string   `json:"to,omitempty"`
	On     Outcome  `json:"on,omitempty"`
	Choice []Choice `json:"choice,omitempty"`
}

// Choice is one branch of a choice group.
type Choice struct {
	When    string `json:"when,omitempty"`
	Default bool   `json:"default,omitempty"`
	To      string `json:"to"`
}

// Then is a success edge.
func Then(from, to string) Edge { return Edge{From: from, To: to} }

// On is an edge firing on outcome.
func On(from, to string, outcome Outcome) Edge { return Edge{From: from, To: to, On: outcome} }

// Choose is a choice group: branches in order, the last one a default.
func Choose(from string, branches ...Choice) Edge { return Edge{From: from, Choice: branches} }

// When is a choice branch taken when cond holds.
func When(cond, to string) Choice { return Choice{When: cond, To: to} }

// Otherwise is a choice group's default branch.
func Otherwise(to string) Choice { return Choice{Default: true, To: to} }

// NewStep returns a step of type t with settings with: a typed settings
// struct (TaskWith, …) or a With map.
func NewStep(ref string, t StepType, with any) Step {
	return Step{Ref: ref, Type: t, With: toWith(with)}
}

// Named returns s with a label for the dashboard.
func (s Step) Named(name string) Step { s.Name = name; return s }

// If returns s run only when the expression holds (else skipped).
func (s Step) If(expr string) Step { s.RunIf = expr; return s }

// Each returns s run once per element of the list expression, with
// item, index and key in scope (task, http and transform steps).
func (s Step) Each(listExpr string) Step { s.ForEach = listExpr; return s }

// JoinAny returns s ready as soon as one incoming edge fires.
func (s Step) JoinAny() Step { s.Join, s.JoinAtLeast = "any", nil; return s }

// JoinN returns s ready once n incoming edges fired; with cancelRest its
// unfinished predecessors are cancelled then.
func (s Step) JoinN(n int, cancelRest bool) Step {
	s.Join, s.JoinAtLeast = "", &PartialJoin{AtLeast: n, CancelRest: cancelRest}
	return s
}

// EndsRun returns s ending the run with status (succeeded or failed) as
// soon as it succeeds; the run's other steps are cancelled.
func (s Step) EndsRun(status string) Step { s.EndRun = status; return s }

// Limited returns s with at most limit attempts running at once for the
// key keyExpr evaluates to, across the tenant's runs (task and http
// steps); see StepConcurrency for a limit by expression.
func (s Step) Limited(keyExpr string, limit int) Step {
	s.Concurrency = &StepConcurrency{KeyExpr: keyExpr, Limit: limit}
	return s
}

// ContinueOnError returns s whose failure fires its error and done edges
// instead of failing the run.
func (s Step) ContinueOnError() Step { s.OnError = "continue"; return s }

// WithRetry returns s with a retry policy (task and http steps).
func (s Step) WithRetry(r Retry) Step { s.Retry = &r; return s }

// WithTimeout returns s with a per-attempt timeout (task and http steps).
func (s Step) WithTimeout(d time.Duration) Step { s.Timeout = d; return s }

// Set returns s with one setting of its With set (or replaced).
func (s Step) Set(key string, value any) Step {
	w := make(With, len(s.With)+1)
	for k, v := range s.With {
		w[k] = v
	}
	w[key] = toValue(reflect.ValueOf(value))
	s.With = w
	return s
}

// durationString spells d for a document; 0 is left out.
func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	timeType     = reflect.TypeOf(time.Time{})
)

// toWith turns a typed settings struct into the document's `with`: json
// tags name the keys, zero fields are left out, durations become strings
// and times RFC 3339.
func toWith(v any) With {
	switch x := v.(type) {
	case nil:
		return nil
	case With:
		return x
	case map[string]any:
		return With(x)
	}
	m, _ := toValue(reflect.ValueOf(v)).(map[string]any)
	return With(m)
}

func toValue(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	switch {
	case v.Type() == durationType:
		return durationString(time.Duration(v.Int()))
	case v.Type() == timeType:
		return v.Interface().(time.Time).UTC().Format(time.RFC3339Nano)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return toValue(v.Elem())
	case reflect.Struct:
		if _, custom := v.Interface().(json.Marshaler); custom {
			return v.Interface()
		}
		return structValue(v)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface() // json.RawMessage and []byte marshal themselves
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = toValue(v.Index(i))
		}
		return out
	}
	return v.Interface()
}

func structValue(v reflect.Value) map[string]any {
	out := map[string]any{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !t.Field(i).IsExported() {
			continue
		}
		if f := v.Field(i); !f.IsZero() {
			out[name] = toValue(f)
		}
	}
	return out
}

// Validate reports the mistakes the SDK can see without the server: a
// missing key, steps without a ref or type. The server's compiler checks
// everything (Compile, Publish).
func (d *Definition) Validate() error {
	if d.Key == "" {
		return fmt.Errorf("ductor: definition has no key")
	}
	if len(d.Steps) == 0 {
		return fmt.Errorf("ductor: definition %s has no steps", d.Key)
	}
	for i, s := range d.Steps {
		if s.Ref == "" || s.Type == "" {
			return fmt.Errorf("ductor: definition %s: steps[%d] needs a ref and a type", d.Key, i)
		}
	}
	return nil
}
