package sdk

import "github.com/ductor/ductor/app/definition"

// The definition model, so one import builds and publishes workflows.
// These are aliases of package definition's types: a value built here is
// the JSON document a user would write in a file.
type (
	// Definition is a workflow definition document.
	Definition = definition.Definition
	// StepDef is one step of a definition.
	StepDef = definition.StepDef
	// With holds a step's type-specific settings, keyed as in the document.
	With = definition.With
	// RetryDef overrides parts of a step's retry policy.
	RetryDef = definition.RetryDef
	// EdgeDef is an edge, or a choice group.
	EdgeDef = definition.EdgeDef
	// ChoiceDef is one branch of a choice group.
	ChoiceDef = definition.ChoiceDef
	// LimitsDef lowers the server's limits for one definition.
	LimitsDef = definition.LimitsDef
	// StepType names a step type.
	StepType = definition.StepType
	// Outcome names the outcome an edge fires on.
	Outcome = definition.Outcome
)

// Step types.
const (
	TypeTask        = definition.TypeTask
	TypeHTTP        = definition.TypeHTTP
	TypeTransform   = definition.TypeTransform
	TypeCondition   = definition.TypeCondition
	TypeScatter     = definition.TypeScatter
	TypeGather      = definition.TypeGather
	TypeSubworkflow = definition.TypeSubworkflow
	TypeCheckpoint  = definition.TypeCheckpoint
	TypeWait        = definition.TypeWait
	TypeSignal      = definition.TypeSignal
	TypeEvent       = definition.TypeEvent
	TypeEventSet    = definition.TypeEventSet
	TypeDigest      = definition.TypeDigest
	TypeApproval    = definition.TypeApproval
	TypeHumanLoop   = definition.TypeHumanLoop
)

// Outcomes an edge can fire on.
const (
	OutcomeSuccess  = definition.OutcomeSuccess
	OutcomeError    = definition.OutcomeError
	OutcomeTrue     = definition.OutcomeTrue
	OutcomeFalse    = definition.OutcomeFalse
	OutcomeApproved = definition.OutcomeApproved
	OutcomeRejected = definition.OutcomeRejected
	OutcomeDone     = definition.OutcomeDone
)

// Builders of steps and edges.

// NewStep returns a step of type t.
func NewStep(ref string, t StepType, with With) StepDef { return definition.NewStep(ref, t, with) }

// TaskStep is a task step running handler: a Go handler of the server,
// or a [Worker]'s (definition.Task; the name Task is the task a handler
// receives). Set "queue" to send it to the workers of another queue:
// TaskStep("resize", "images.resize").Set("queue", "gpu").
func TaskStep(ref, handler string) StepDef { return definition.Task(ref, handler) }

// HTTP requests url with method.
func HTTP(ref, method, url string) StepDef { return definition.HTTP(ref, method, url) }

// Transform evaluates a CEL expression.
func Transform(ref, expr string) StepDef { return definition.Transform(ref, expr) }

// Condition evaluates a CEL bool; follow it with On(…, OutcomeTrue) and
// On(…, OutcomeFalse) edges.
func Condition(ref, expr string) StepDef { return definition.Condition(ref, expr) }

// Wait parks for a duration ("90s", "PT1H").
func Wait(ref, duration string) StepDef { return definition.Wait(ref, duration) }

// Signal parks until a signal called name arrives.
func Signal(ref, name string) StepDef { return definition.Signal(ref, name) }

// Then is a success edge.
func Then(from, to string) EdgeDef { return definition.Then(from, to) }

// On is an edge firing on outcome.
func On(from, to string, outcome Outcome) EdgeDef { return definition.On(from, to, outcome) }

// Choose is a choice group: branches in order, the last one a default.
func Choose(from string, branches ...ChoiceDef) EdgeDef { return definition.Choose(from, branches...) }

// When is a choice branch taken when cond holds.
func When(cond, to string) ChoiceDef { return definition.When(cond, to) }

// Otherwise is a choice group's default branch.
func Otherwise(to string) ChoiceDef { return definition.Otherwise(to) }
