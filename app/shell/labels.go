package shell

import (
	"sync"

	"github.com/google/uuid"

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

// maxLabelValues bounds the distinct values of a tenant-data label (a
// definition key) in one process, and maxLabelValuesPerTenant the share
// of them one tenant may take: a tenant with many definitions cannot
// leave the others only "other".
const (
	maxLabelValues          = 100
	maxLabelValuesPerTenant = 10
)

// labelCap hands out at most max label values, at most perTenant of them
// to one tenant, first come first served, then "other", so tenant data
// never makes a metric's series unbounded. A value is admitted for the
// tenant that uses it: two tenants' definitions of the same key each
// take a place in their own share.
type labelCap struct {
	mu        sync.Mutex
	max       int
	perTenant int
	seen      map[tenantValue]bool
	byTenant  map[uuid.UUID]int
}

type tenantValue struct {
	tenant uuid.UUID
	value  string
}

func newLabelCap(max, perTenant int) *labelCap {
	return &labelCap{max: max, perTenant: perTenant, seen: map[tenantValue]bool{}, byTenant: map[uuid.UUID]int{}}
}

// value is v as a label of tenant's series: v once admitted, else
// "other".
func (l *labelCap) value(tenant uuid.UUID, v string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := tenantValue{tenant, v}
	if l.seen[k] {
		return v
	}
	if len(l.seen) >= l.max || l.byTenant[tenant] >= l.perTenant {
		return labelOther
	}
	l.seen[k] = true
	l.byTenant[tenant]++
	return v
}
