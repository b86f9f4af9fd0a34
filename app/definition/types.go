package definition

import (
	"fmt"
	"slices"
	"strings"
)

// StepTypes lists the fifteen canonical step types.
var StepTypes = []StepType{
	TypeTask, TypeHTTP, TypeTransform, TypeCondition, TypeScatter, TypeGather,
	TypeSubworkflow, TypeCheckpoint, TypeWait, TypeSignal, TypeEvent,
	TypeEventSet, TypeDigest, TypeApproval, TypeHumanLoop,
}

// aliases are names people reach for that compile as an error naming the
// canonical type.
var aliases = map[string]StepType{
	"sleep": TypeWait, "delay": TypeWait, "timer": TypeWait, "pause": TypeWait,
	"if": TypeCondition, "branch": TypeCondition, "switch": TypeCondition, "choice": TypeCondition,
	"map": TypeScatter, "foreach": TypeScatter, "for_each": TypeScatter, "fan_out": TypeScatter,
	"fanout": TypeScatter, "parallel": TypeScatter,
	"join": TypeGather, "reduce": TypeGather, "fan_in": TypeGather, "fanin": TypeGather, "collect": TypeGather,
	"child": TypeSubworkflow, "sub_workflow": TypeSubworkflow, "workflow": TypeSubworkflow,
	"child_workflow": TypeSubworkflow, "subflow": TypeSubworkflow,
	"http_request": TypeHTTP, "request": TypeHTTP, "webhook": TypeHTTP, "fetch": TypeHTTP, "api": TypeHTTP,
	"script": TypeTransform, "expr": TypeTransform, "set": TypeTransform, "expression": TypeTransform,
	"human": TypeHumanLoop, "manual": TypeHumanLoop, "case": TypeHumanLoop, "humanloop": TypeHumanLoop,
	"approve": TypeApproval, "approvals": TypeApproval,
	"wait_for_event": TypeEvent, "on_event": TypeEvent, "events": TypeEventSet, "eventset": TypeEventSet,
	"activity": TypeTask, "job": TypeTask, "worker": TypeTask, "handler": TypeTask,
	"mark": TypeCheckpoint, "milestone": TypeCheckpoint, "batch": TypeDigest,
}

// Valid reports whether t is one of the canonical step types.
func (t StepType) Valid() bool { return slices.Contains(StepTypes, t) }

// stepTypeProblem explains why name is not a step type, suggesting the
// canonical name for an alias, a different case or a near miss.
func stepTypeProblem(name string) string {
	if c, ok := aliases[strings.ToLower(name)]; ok {
		return fmt.Sprintf("unknown step type %q: did you mean %q?", name, c)
	}
	if t := StepType(strings.ToLower(strings.ReplaceAll(name, "-", "_"))); t.Valid() {
		return fmt.Sprintf("unknown step type %q: did you mean %q?", name, t)
	}
	if t, ok := nearestType(name); ok {
		return fmt.Sprintf("unknown step type %q: did you mean %q?", name, t)
	}
	names := make([]string, len(StepTypes))
	for i, t := range StepTypes {
		names[i] = string(t)
	}
	return fmt.Sprintf("unknown step type %q: expected one of %s", name, strings.Join(names, ", "))
}

func nearestType(name string) (StepType, bool) {
	for _, t := range StepTypes {
		if editDistance(strings.ToLower(name), string(t)) <= 2 && len(name) > 3 {
			return t, true
		}
	}
	return "", false
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Outcomes lists the outcomes a step of type t can end with; OutcomeDone
// is valid for every type and is not listed.
func (t StepType) Outcomes() []Outcome {
	switch t {
	case TypeCondition:
		return []Outcome{OutcomeTrue, OutcomeFalse, OutcomeError}
	case TypeApproval:
		return []Outcome{OutcomeApproved, OutcomeRejected, OutcomeError}
	case TypeCheckpoint, TypeWait, TypeDigest:
		return []Outcome{OutcomeSuccess}
	}
	return []Outcome{OutcomeSuccess, OutcomeError}
}

// CanEnd reports whether a step of type t can fire an edge on o.
func (t StepType) CanEnd(o Outcome) bool {
	return o == OutcomeDone || slices.Contains(t.Outcomes(), o)
}

var outcomes = []Outcome{
	OutcomeSuccess, OutcomeError, OutcomeTrue, OutcomeFalse,
	OutcomeApproved, OutcomeRejected, OutcomeDone,
}

// Valid reports whether o is a known outcome.
func (o Outcome) Valid() bool { return slices.Contains(outcomes, o) }

// usesRetry reports whether steps of type t run attempts on a worker and
// so take a retry policy and a per-attempt timeout.
func (t StepType) usesRetry() bool { return t == TypeTask || t == TypeHTTP }

// takesForEach reports whether for_each may be set on steps of type t.
func (t StepType) takesForEach() bool {
	return t == TypeTask || t == TypeHTTP || t == TypeTransform
}
