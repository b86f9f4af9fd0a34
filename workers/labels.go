package workers

import (
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
)

// Metric labels come only from fixed sets, whatever tenants, their
// definitions, their handlers or their bridge workers send: a value
// outside a set is counted as "other". (The queue-depth collector's
// tenant_id label is bounded by the tenants an operator creates.)

// labelOther stands for every value outside a label's set.
const labelOther = "other"

// outcomeLabels are the step outcomes a metric may carry: success and
// the error codes Ductor itself produces.
var outcomeLabels = setOf(
	"success",
	steps.CodeTaskFailed, steps.CodeUnknownHandler, steps.CodeInvalidInput,
	steps.CodeInvalidOutput, steps.CodePanic, steps.CodeCancelled,
	steps.CodeHTTPStatus, steps.CodeHTTPError, steps.CodeSSRFBlocked,
	engine.CodeTimeout, engine.CodePayloadTooLarge, engine.CodeInvalidStep,
	engine.CodeExpressionError, engine.CodeExpressionLimit, engine.CodeRejected,
	engine.CodeChildFailed, engine.CodeTooManyChildren, engine.CodeGatherRaised,
	engine.CodeSignalBufferFull, engine.CodeCancelled, engine.CodeMaxIterations, engine.CodeEndRun,
	CodeNoWorker,
)

// outcomeLabel is code as a metric label.
func outcomeLabel(code string) string { return bounded(outcomeLabels, code) }

// stepTypeLabel is a step type as a metric label.
func stepTypeLabel(t string) string {
	if definition.StepType(t).Valid() {
		return t
	}
	return labelOther
}

func bounded(set map[string]bool, v string) string {
	if set[v] {
		return v
	}
	return labelOther
}

func setOf(vs ...string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// warningLabels are the warnings the engine raises.
var warningLabels = setOf("transitions_soft")

func warningLabel(code string) string { return bounded(warningLabels, code) }

var statusLabels = setOf(
	string(engine.RunPending), string(engine.RunRunning), string(engine.RunWaiting),
	string(engine.RunSucceeded), string(engine.RunFailed), string(engine.RunCancelled),
	string(engine.RunTimedOut), string(engine.RunTerminated),
)

func statusLabel(s engine.RunStatus) string { return bounded(statusLabels, string(s)) }
