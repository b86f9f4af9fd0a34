// Package sysevents builds Ductor's own events: the ductor.* events a
// tenant's event stream receives when its runs, steps, approvals, cases,
// schedules and webhooks do something worth reacting to. It is pure: the
// shell hands it the facts of a transition it is about to persist, and
// it returns the events to store in the same transaction. It reads no
// clock and does no I/O.
//
// Each event has a stable id, derived from what it reports (the run and
// the history entry of the transition, the approval's key…), so that a
// transition persisted twice (a tick retried after a rolled-back
// transaction) stores one event.
//
// # Loops
//
// A run started by an event trigger on a system event carries the name
// of that event (search attribute "event") and its generation (search
// attribute "system_event_generation"): 1 for a run started by an event
// about an ordinary run, 2 for a run started by an event about such a
// run, and so on. An event of a kind about a run of generation 2 or more
// that was started by an event of the same kind is not emitted: a
// trigger on ductor.run.failed whose run always fails starts one
// notifier run for the original failure and one for the notifier's
// failure, and stops there.
package sysevents

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
)

// The names of the system events.
const (
	RunSucceeded         = "ductor.run.succeeded"
	RunFailed            = "ductor.run.failed"
	RunTimedOut          = "ductor.run.timed_out"
	RunCancelled         = "ductor.run.cancelled"
	StepFailed           = "ductor.step.failed"
	ApprovalRequested    = "ductor.approval.requested"
	ApprovalDecided      = "ductor.approval.decided"
	CaseOpened           = "ductor.case.opened"
	ScheduleFailed       = "ductor.schedule.failed"
	WebhookRefused       = "ductor.webhook.refused"
	SubscriptionDisabled = "ductor.subscription.disabled"
	UsageWarning         = "ductor.usage.warning"
)

// Names lists every system event, for documentation and validation.
var Names = []string{
	RunSucceeded, RunFailed, RunTimedOut, RunCancelled, StepFailed,
	ApprovalRequested, ApprovalDecided, CaseOpened, ScheduleFailed, WebhookRefused,
	SubscriptionDisabled, UsageWarning,
}

// Prefix starts every system event's name; no other event may use it.
const Prefix = "ductor."

// IsSystem reports whether name is a system event's.
func IsSystem(name string) bool { return strings.HasPrefix(name, Prefix) }

// Search attributes a run started by a system event carries.
const (
	AttrEvent      = "event"
	AttrGeneration = "system_event_generation"
)

// MaxGeneration is the generation past which a run's events of the kind
// that started it are not emitted.
const MaxGeneration = 1

// Event is one system event to store: its id, name and JSON data.
type Event struct {
	ID   uuid.UUID
	Name string
	Data map[string]any
}

// namespace derives the events' ids.
var namespace = uuid.MustParse("6f1d7f39-4c5e-4a53-9a64-4f0e2a8f5d11")

// ID is the stable id of the event of name about what key names.
func ID(name string, key ...string) uuid.UUID {
	return uuid.NewSHA1(namespace, []byte(name+"\x00"+strings.Join(key, "\x00")))
}

// Run is what the events about a run say of it.
type Run struct {
	TenantID         uuid.UUID
	ID               uuid.UUID
	Definition       string
	Version          int
	Subject          string
	SearchAttributes map[string]any
	ParentRunID      *uuid.UUID
}

// Origin is the system event that started a run, if one did.
func (r Run) Origin() (name string, generation int) {
	name, _ = r.SearchAttributes[AttrEvent].(string)
	if !IsSystem(name) {
		return "", 0
	}
	return name, toInt(r.SearchAttributes[AttrGeneration])
}

// Generation is the generation of the events about r: 0 for a run no
// system event started.
func (r Run) Generation() int {
	_, g := r.Origin()
	return g
}

// Suppressed reports whether an event of name about r is not emitted
// (see Loops).
func (r Run) Suppressed(name string) bool {
	origin, g := r.Origin()
	return origin == name && g > MaxGeneration
}

// ChildAttributes are the search attributes of a run an event trigger
// starts from e (nil when e is no system event).
func ChildAttributes(name string, data any) map[string]any {
	if !IsSystem(name) {
		return nil
	}
	g := 0
	if m, ok := data.(map[string]any); ok {
		g = toInt(m["generation"])
	}
	return map[string]any{AttrGeneration: g + 1}
}

// toInt reads a whole number decoded from JSON in any of its models.
func toInt(v any) int {
	switch g := v.(type) {
	case float64:
		return int(g)
	case int:
		return g
	case int64:
		return int(g)
	case json.Number:
		n, _ := g.Int64()
		return int(n)
	case string:
		n, _ := strconv.Atoi(g)
		return n
	}
	return 0
}

func (r Run) data() map[string]any {
	d := map[string]any{
		"tenant_id":  r.TenantID.String(),
		"run_id":     r.ID.String(),
		"definition": r.Definition,
		"version":    r.Version,
		"subject":    r.Subject,
		"generation": r.Generation(),
		"links":      map[string]any{"run": "/runs/" + r.ID.String()},
	}
	if r.ParentRunID != nil {
		d["parent_run_id"] = r.ParentRunID.String()
	}
	return d
}

func errorData(e *engine.Error) map[string]any {
	if e == nil {
		return nil
	}
	out := map[string]any{"code": e.Code, "message": e.Message}
	if e.Node != "" {
		out["node"] = e.Node
	}
	return out
}

// runEventNames maps a run's final statuses to their events.
var runEventNames = map[engine.RunStatus]string{
	engine.RunSucceeded: RunSucceeded,
	engine.RunFailed:    RunFailed,
	engine.RunTimedOut:  RunTimedOut,
	engine.RunCancelled: RunCancelled,
}

// FromDecisions are the events a tick's decisions about r report: the
// run reaching a final status, steps failing for good, approvals and
// cases opened. before is the run's status the tick read; after its
// state once the decisions are applied.
func FromDecisions(r Run, before engine.RunStatus, after engine.Run, decisions []*engine.Decision) []Event {
	var out []Event
	add := func(e Event) {
		if !r.Suppressed(e.Name) {
			out = append(out, e)
		}
	}
	for _, d := range decisions {
		nodes := make(map[string]*engine.Node, len(d.Nodes))
		for _, n := range d.Nodes {
			nodes[n.ID] = n
		}
		for _, t := range d.Transitions {
			if t.Node == "" || t.To != string(engine.NodeFailed) {
				continue
			}
			data := r.data()
			data["node"] = t.Node
			data["attempt"] = t.Attempt
			data["generation_of_node"] = t.Generation
			if n := nodes[t.Node]; n != nil {
				data["ref"] = n.Ref
				if e := errorData(n.Error); e != nil {
					data["error"] = e
				}
			}
			add(Event{ID: ID(StepFailed, r.ID.String(), strconv.FormatInt(t.Seq, 10)), Name: StepFailed, Data: data})
		}
		for _, c := range d.Commands {
			switch v := c.(type) {
			case engine.OpenApproval:
				data := r.data()
				data["node"] = v.Node
				data["key"] = v.Key
				data["title"] = v.Title
				data["approvers"] = stringsOrEmpty(v.Approvers)
				data["links"].(map[string]any)["approvals"] = "/approvals"
				add(Event{ID: ID(ApprovalRequested, r.ID.String(), v.Key, strconv.FormatInt(after.TransitionCount, 10)), Name: ApprovalRequested, Data: data})
			case engine.OpenCase:
				data := r.data()
				data["node"] = v.Node
				data["key"] = v.Key
				data["title"] = v.Title
				data["assignees"] = stringsOrEmpty(v.Assignees)
				add(Event{ID: ID(CaseOpened, r.ID.String(), v.Key, strconv.FormatInt(after.TransitionCount, 10)), Name: CaseOpened, Data: data})
			}
		}
	}
	if name, ok := runEventNames[after.Status]; ok && after.Status != before {
		data := r.data()
		data["status"] = string(after.Status)
		if e := errorData(after.Error); e != nil {
			data["error"] = e
		}
		if after.CancelReason != "" {
			data["reason"] = after.CancelReason
		}
		add(Event{ID: ID(name, r.ID.String(), strconv.FormatInt(after.TransitionCount, 10)), Name: name, Data: data})
	}
	return out
}

// ApprovalDecision is what ductor.approval.decided reports: Key is the
// approval's id, Decision approved or rejected.
type ApprovalDecision struct {
	Run      Run
	Node     string
	Key      string
	Decision string
	By       string
}

// Decided is the event of an approval's decision.
func Decided(a ApprovalDecision) []Event {
	if a.Run.Suppressed(ApprovalDecided) {
		return nil
	}
	data := a.Run.data()
	data["node"] = a.Node
	data["approval_id"] = a.Key
	data["decision"] = a.Decision
	data["by"] = a.By
	return []Event{{ID: ID(ApprovalDecided, a.Run.ID.String(), a.Key), Name: ApprovalDecided, Data: data}}
}

// Subscription is what ductor.subscription.disabled reports.
type Subscription struct {
	ID       uuid.UUID
	URL      string
	Failures int
	Reason   string
	// Disabled is the subscription's disabled_at, as text, which makes the
	// event's id differ from one disabling to the next.
	Disabled string
}

// Disabled is the event of a subscription disabled after failures.
func Disabled(s Subscription) Event {
	return Event{
		ID: ID(SubscriptionDisabled, s.ID.String(), s.Disabled), Name: SubscriptionDisabled,
		Data: map[string]any{
			"subscription_id": s.ID.String(), "url": s.URL, "failures": s.Failures, "reason": s.Reason,
			"links": map[string]any{"subscription": "/subscriptions/" + s.ID.String()},
		},
	}
}

func stringsOrEmpty(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ScheduleAction is what ductor.schedule.failed reports: an action of a
// schedule that started no run.
type ScheduleAction struct {
	Schedule    string
	Definition  string
	ScheduledAt string // RFC 3339
	Error       string
	Paused      bool
}

// ScheduleNotStarted is the event of a schedule's action that started no
// run.
func ScheduleNotStarted(a ScheduleAction) Event {
	return Event{
		ID: ID(ScheduleFailed, a.Schedule, a.ScheduledAt), Name: ScheduleFailed,
		Data: map[string]any{
			"schedule_id": a.Schedule, "definition": a.Definition, "scheduled_at": a.ScheduledAt,
			"error": map[string]any{"code": "not_started", "message": a.Error}, "paused": a.Paused,
			"links": map[string]any{"schedule": "/schedules/" + a.Schedule},
		},
	}
}

// WebhookRefusal is what ductor.webhook.refused reports: a delivery to
// one of the tenant's webhooks that was refused, and how many refusals
// of that webhook were not reported since the last event about it.
type WebhookRefusal struct {
	Webhook string // the webhook's id, its name in the path
	Event   string // the event its deliveries become
	// Reason is the refusal's code: bad_signature, missing_signature,
	// stale_timestamp, too_large, invalid_body, id_reused or rate_limited.
	Reason     string
	Status     int    // the HTTP status answered
	RemoteAddr string // the client's address
	At         string // RFC 3339, the database's clock; names the event
	Suppressed int64
}

// Refused is the event of a webhook's refused delivery.
func Refused(r WebhookRefusal) Event {
	return Event{
		ID: ID(WebhookRefused, r.Webhook, r.At), Name: WebhookRefused,
		Data: map[string]any{
			"webhook_id": r.Webhook, "event": r.Event, "reason": r.Reason, "status": r.Status,
			"remote_addr": r.RemoteAddr, "at": r.At, "suppressed": r.Suppressed,
			"links": map[string]any{"webhook": "/webhooks/" + r.Webhook},
		},
	}
}

// QuotaWarning is what ductor.usage.warning reports: a quota of the
// tenant's past its soft limit, once per period and quota.
type QuotaWarning struct {
	Quota       string // monthly_steps, monthly_runs, waiting_runs or stored_bytes
	Period      string // the month's first day, 2026-12-01
	Used, Limit int64
	SoftLimit   int64 // the use past which the warning is recorded
}

// UsageWarned is the event of a quota past its soft limit.
func UsageWarned(w QuotaWarning) Event {
	return Event{
		ID: ID(UsageWarning, w.Quota, w.Period), Name: UsageWarning,
		Data: map[string]any{
			"quota": w.Quota, "period": w.Period, "used": w.Used, "limit": w.Limit, "soft_limit": w.SoftLimit,
			"links": map[string]any{"usage": "/usage"},
		},
	}
}
