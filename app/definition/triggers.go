package definition

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/schedule"
)

// Trigger starts runs of the definition without a caller: a schedule or
// an event. Exactly one of the two is set.
type Trigger struct {
	Schedule *ScheduleTrigger `json:"schedule,omitempty"`
	Event    *EventTrigger    `json:"event,omitempty"`
}

// ScheduleTrigger is a schedule the definition declares: publishing the
// definition creates or updates it (keyed by ID), and unpublishing its
// last version pauses it.
type ScheduleTrigger struct {
	ID             string            `json:"id"`
	Spec           schedule.Spec     `json:"spec"`
	Input          any               `json:"input,omitempty"`
	Overlap        schedule.Overlap  `json:"overlap"`
	CatchupWindow  schedule.Duration `json:"catchup_window"`
	PauseOnFailure bool              `json:"pause_on_failure,omitempty"`
	Paused         bool              `json:"paused,omitempty"`
}

// EventTrigger starts a run of the newest published version for every
// event of the name that passes the filter; InputExpr (default: the
// event's data) makes the run's input. In both expressions `event` is
// the event's data.
type EventTrigger struct {
	Name       string `json:"name"`
	FilterExpr string `json:"filter_expr,omitempty"`
	InputExpr  string `json:"input_expr,omitempty"`
}

// MaxTriggers bounds a definition's triggers.
const MaxTriggers = 50

// IDPattern is what schedule and webhook ids look like.
var IDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

var scheduleFields = []string{"id", "cron", "interval", "offset", "timezone", "jitter", "start_at", "end_at",
	"input", "overlap", "catchup_window", "pause_on_failure", "paused"}

// triggers checks the document's triggers: each {schedule: {…}} or
// {event: NAME, filter_expr?, input_expr?}.
func (c *checker) triggers(o object) {
	list := o.list("triggers", false)
	if len(list) > MaxTriggers {
		o.problem("triggers", "at most %d triggers, found %d", MaxTriggers, len(list))
	}
	ids := map[string]path{}
	for i, v := range list {
		t, ok := c.object(v, o.p.dot("triggers").at(i), "")
		if !ok {
			continue
		}
		switch t.oneOf(false, "schedule", "event") {
		case "schedule":
			t.known("schedule")
			if s := c.scheduleTrigger(t, ids); s != nil {
				c.m.Triggers = append(c.m.Triggers, Trigger{Schedule: s})
			}
		case "event":
			t.known("event", "filter_expr", "input_expr")
			c.m.Triggers = append(c.m.Triggers, Trigger{Event: eventTrigger(t)})
		}
	}
}

func eventTrigger(t object) *EventTrigger {
	e := &EventTrigger{Name: t.required("event")}
	if e.Name != "" && !namePattern.MatchString(e.Name) {
		t.problem("event", "must be 1 to 128 characters without spaces, not %q", e.Name)
	}
	e.FilterExpr, _ = t.expr("filter_expr", expr.KindBool)
	e.InputExpr, _ = t.expr("input_expr", expr.KindAny)
	return e
}

// scheduleTrigger checks one schedule; its id defaults to KEY-N, N
// counting the document's schedules from 1.
func (c *checker) scheduleTrigger(t object, ids map[string]path) *ScheduleTrigger {
	o, ok := c.object(t.m["schedule"], t.p.dot("schedule"), "")
	if !ok {
		return nil
	}
	o.known(scheduleFields...)
	s := &ScheduleTrigger{ID: o.strOr("id", fmt.Sprintf("%s-%d", c.m.Key, len(ids)+1))}
	if !IDPattern.MatchString(s.ID) {
		o.problem("id", "must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}, not %q", s.ID)
	}
	if first, dup := ids[s.ID]; dup {
		o.problem("id", "duplicate schedule id %q (also %s)", s.ID, first)
	}
	ids[s.ID] = o.p
	s.Spec = scheduleSpec(o)
	s.Input = o.m["input"]
	s.Overlap = schedule.Overlap(o.enum("overlap", string(schedule.OverlapSkip), overlapNames()...))
	s.CatchupWindow = schedule.Duration(schedule.DefaultCatchupWindow)
	if d, ok := o.duration("catchup_window"); ok {
		s.CatchupWindow = schedule.Duration(d)
	}
	s.PauseOnFailure, _ = o.boolean("pause_on_failure")
	s.Paused, _ = o.boolean("paused")
	return s
}

func overlapNames() []string {
	names := make([]string, len(schedule.Overlaps))
	for i, o := range schedule.Overlaps {
		names[i] = string(o)
	}
	return names
}

// scheduleSpec reads a schedule's when-fields and checks them together.
func scheduleSpec(o object) schedule.Spec {
	var s schedule.Spec
	before := len(o.c.ps.list)
	s.Cron, _ = o.str("cron")
	s.Timezone, _ = o.str("timezone")
	for key, into := range map[string]*schedule.Duration{"interval": &s.Interval, "offset": &s.Offset, "jitter": &s.Jitter} {
		if d, ok := o.duration(key); ok {
			*into = schedule.Duration(d)
		}
	}
	s.StartAt, s.EndAt = o.instant("start_at"), o.instant("end_at")
	if len(o.c.ps.list) > before {
		return s // a field is wrong already: checking them together adds noise
	}
	var p *schedule.Problem
	if _, err := schedule.New(s); errors.As(err, &p) {
		o.problem(p.Field, "%s", p.Message)
	}
	return s
}

// instant reads an optional RFC 3339 time, normalised to UTC.
func (o object) instant(key string) *time.Time {
	s, ok := o.str(key)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		o.problem(key, "must be an RFC 3339 time like 2025-01-02T15:04:05Z, not %q", s)
		return nil
	}
	t = t.UTC()
	return &t
}
