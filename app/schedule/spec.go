package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones load the same on every machine
)

// Spec says when a schedule acts: a cron expression or an interval (one
// of the two), in a time zone, shifted by an offset, each action delayed
// by up to the jitter, between start and end.
type Spec struct {
	// Cron is a five-field expression (minute hour day-of-month month
	// day-of-week) or a shorthand: @yearly, @monthly, @weekly, @daily,
	// @hourly, or @every DURATION (an interval).
	Cron     string   `json:"cron,omitempty"`
	Interval Duration `json:"interval,omitempty"`
	// Offset shifts every time: an interval's phase from the Unix epoch,
	// or a delay after each cron time.
	Offset Duration `json:"offset,omitempty"`
	// Timezone is an IANA zone for cron (default UTC).
	Timezone string `json:"timezone,omitempty"`
	// Jitter delays each action by a deterministic amount below it.
	Jitter  Duration   `json:"jitter,omitempty"`
	StartAt *time.Time `json:"start_at,omitempty"`
	EndAt   *time.Time `json:"end_at,omitempty"`
}

// Bounds on a spec.
const (
	MinInterval = time.Second
	MaxOffset   = 366 * 24 * time.Hour
	MaxJitter   = 24 * time.Hour
)

// ErrInvalid matches every problem New finds in a spec.
var ErrInvalid = errors.New("invalid schedule")

// Problem is one thing wrong with a spec: its field and what.
type Problem struct {
	Field, Message string
}

func (p *Problem) Error() string { return p.Field + ": " + p.Message }

// Is makes errors.Is(err, ErrInvalid) true.
func (p *Problem) Is(target error) bool { return target == ErrInvalid }

func problem(field, format string, args ...any) *Problem {
	return &Problem{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Schedule is a checked spec that computes times.
type Schedule struct {
	spec     Spec
	cron     *cronFields
	loc      *time.Location
	interval time.Duration
	offset   time.Duration
}

// New checks a spec. Its error is a *Problem naming the field.
func New(s Spec) (*Schedule, error) {
	sc := &Schedule{spec: s, loc: time.UTC, interval: s.Interval.D(), offset: s.Offset.D()}
	if err := sc.when(strings.TrimSpace(s.Cron)); err != nil {
		return nil, err
	}
	if err := sc.zone(); err != nil {
		return nil, err
	}
	if err := sc.bounds(); err != nil {
		return nil, err
	}
	return sc, nil
}

// when reads the cron expression or the interval: exactly one.
func (sc *Schedule) when(expr string) error {
	switch {
	case expr == "" && sc.interval == 0:
		return problem("cron", "a schedule needs cron or interval")
	case expr != "" && sc.interval != 0:
		return problem("interval", "give cron or interval, not both")
	case strings.HasPrefix(expr, "@every"):
		d, err := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(expr, "@every")))
		if err != nil {
			return problem("cron", "@every needs a duration like \"@every 10m\"")
		}
		sc.interval = d
	case expr != "":
		return sc.parseCron(expr)
	}
	if sc.interval < MinInterval {
		return problem("interval", "must be at least 1s, not %s", sc.interval)
	}
	return nil
}

func (sc *Schedule) parseCron(expr string) error {
	if strings.Contains(expr, "TZ=") {
		return problem("cron", "set the zone with timezone, not inside the cron expression")
	}
	spec, err := parseCron(expr)
	if err != nil {
		return problem("cron", "invalid cron expression %q: %v", expr, err)
	}
	sc.cron = spec
	return nil
}

// CheckCron checks a five-field cron expression or a shorthand (@daily…;
// @every is not one: it is an interval). Its error names the field:
// "minute: 61 is out of range (0-59)".
func CheckCron(expr string) error {
	_, err := parseCron(strings.TrimSpace(expr))
	return err
}

func (sc *Schedule) zone() error {
	if sc.spec.Timezone == "" {
		return nil
	}
	if sc.cron == nil {
		return problem("timezone", "applies only with cron: an interval counts absolute time")
	}
	loc, err := time.LoadLocation(sc.spec.Timezone)
	if err != nil || sc.spec.Timezone == "Local" {
		return problem("timezone", "unknown time zone %q", sc.spec.Timezone)
	}
	sc.loc = loc
	return nil
}

func (sc *Schedule) bounds() error {
	s := sc.spec
	switch {
	case sc.offset < 0 || sc.offset > MaxOffset:
		return problem("offset", "must be between 0 and %s", Duration(MaxOffset))
	case sc.cron == nil && sc.offset >= sc.interval:
		return problem("offset", "must be shorter than the interval")
	case s.Jitter < 0 || s.Jitter.D() > MaxJitter:
		return problem("jitter", "must be between 0 and 24h")
	case s.StartAt != nil && s.EndAt != nil && !s.EndAt.After(*s.StartAt):
		return problem("end_at", "must be after start_at")
	}
	return nil
}

// Spec returns the spec the schedule was made from.
func (sc *Schedule) Spec() Spec { return sc.spec }

// IsInterval reports whether the schedule counts absolute time.
func (sc *Schedule) IsInterval() bool { return sc.cron == nil }
