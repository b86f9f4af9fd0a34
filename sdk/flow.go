package sdk

import (
	"encoding/json"
	"reflect"
	"time"
)

// What starts a definition's runs by itself (docs/triggers.md) and what
// paces its starts (docs/flow-control.md), as parts of a [Definition].
// Durations are time.Duration, times time.Time; zero fields are left out.

// Trigger starts runs without a caller: give Schedule, or Event (with
// FilterExpr and InputExpr).
type Trigger struct {
	Schedule *ScheduleTrigger `json:"schedule,omitempty"`
	// Event starts a run of the newest published version for every event
	// of this name that FilterExpr (over `event`) lets through; InputExpr
	// is the run's input (default: the event's data).
	Event      string `json:"event,omitempty"`
	FilterExpr string `json:"filter_expr,omitempty"`
	InputExpr  string `json:"input_expr,omitempty"`
}

// OnSchedule is a trigger creating or updating, at each publish, the
// schedule s (by its ID).
func OnSchedule(s ScheduleTrigger) Trigger { return Trigger{Schedule: &s} }

// OnEvent is a trigger starting a run for each event named name that
// filterExpr lets through ("" for all).
func OnEvent(name, filterExpr string) Trigger { return Trigger{Event: name, FilterExpr: filterExpr} }

// ScheduleTrigger is a schedule a definition declares: Cron (in
// Timezone) or Interval (shifted by Offset).
type ScheduleTrigger struct {
	// ID names the schedule; publishing again updates it (default KEY-N).
	ID       string        `json:"id"`
	Cron     string        `json:"cron"`
	Timezone string        `json:"timezone"`
	Interval time.Duration `json:"interval"`
	Offset   time.Duration `json:"offset"`
	// Jitter delays each start by up to this long, at random.
	Jitter time.Duration `json:"jitter"`
	// StartAt and EndAt bound when it starts runs.
	StartAt time.Time `json:"start_at"`
	EndAt   time.Time `json:"end_at"`
	Input   any       `json:"input"`
	// Overlap is what a start does while the previous run runs: skip
	// (default), buffer_one, buffer_all, cancel_other, terminate_other or
	// allow_all.
	Overlap string `json:"overlap"`
	// CatchupWindow is how far back missed starts are made up.
	CatchupWindow  time.Duration `json:"catchup_window"`
	PauseOnFailure bool          `json:"pause_on_failure"`
	Paused         bool          `json:"paused"`
}

// MarshalJSON writes the schedule as the document spells it.
func (s ScheduleTrigger) MarshalJSON() ([]byte, error) { return marshalFields(s) }

// Concurrency bounds how many runs run at once per key: at most Limit
// (or the int expression LimitExpr) for each key KeyExpr evaluates to
// (default: one key). Strategy is queue (default), cancel_in_progress or
// cancel_newest.
type Concurrency struct {
	KeyExpr   string `json:"key_expr"`
	Limit     int    `json:"limit"`
	LimitExpr string `json:"-"`
	Strategy  string `json:"strategy"`
}

// MarshalJSON writes the rule, its limit a number or an expression.
func (c Concurrency) MarshalJSON() ([]byte, error) {
	m := structValue(reflect.ValueOf(c))
	m["limit"] = limitValue(c.Limit, c.LimitExpr)
	return json.Marshal(m)
}

// Rate is at most Limit starts of a key per Period: a definition's
// RateLimit refuses the others (429 with Retry-After), its Throttle
// delays them.
type Rate struct {
	KeyExpr string        `json:"key_expr"`
	Limit   int           `json:"limit"`
	Period  time.Duration `json:"period"`
}

// MarshalJSON writes the rate as the document spells it.
func (r Rate) MarshalJSON() ([]byte, error) { return marshalFields(r) }

// Debounce coalesces the starts of a key within Period of each other into
// one run, with the last input, once the key is quiet for Period (and at
// the latest MaxWait after the first).
type Debounce struct {
	KeyExpr string        `json:"key_expr"`
	Period  time.Duration `json:"period"`
	MaxWait time.Duration `json:"max_wait"`
}

// MarshalJSON writes the debounce as the document spells it.
func (d Debounce) MarshalJSON() ([]byte, error) { return marshalFields(d) }

// marshalFields writes a struct of the document by its json tags, zero
// fields left out, durations as strings and times in RFC 3339.
func marshalFields(v any) ([]byte, error) { return json.Marshal(structValue(reflect.ValueOf(v))) }
