package definition

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // timezones load the same on every machine

	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/schedule"
)

func withSubworkflow(_ *checker, spec WithSpec, o object, out map[string]any) {
	o.readAll(spec, out)
	o.forbidOtherModes(spec, out["mode"].(string))
}

func readWaitFor(o object, _ Field, out map[string]any) { out["wait_for"] = waitFor(o) }

// readChildInput: a repeating subworkflow's input_expr sees the loop.
func readChildInput(o object, _ Field, out map[string]any) {
	if s, ok := o.exprScoped("input_expr", expr.KindAny, repeatScope(o)...); ok {
		out["input_expr"] = s
	}
}

func readRepeat(o object, _ Field, out map[string]any) { o.c.repeat(o, out) }

// repeatScope: a repeating subworkflow's input_expr sees the loop.
func repeatScope(o object) []string {
	if o.has("repeat") {
		return expr.LoopVars
	}
	return nil
}

// waitFor reads "terminal" or "checkpoint:NAME".
func waitFor(o object) string {
	s, ok := o.str("wait_for")
	if !ok || s == "terminal" {
		return "terminal"
	}
	name, isCheckpoint := strings.CutPrefix(s, "checkpoint:")
	if !isCheckpoint || !namePattern.MatchString(name) {
		o.problem("wait_for", `must be "terminal" or "checkpoint:NAME", not %q`, s)
	}
	return s
}

func withWait(_ *checker, spec WithSpec, o object, out map[string]any) {
	o.readAll(spec, out)
	if _, cron := out["cron"]; o.has("timezone") && !cron {
		o.problem("timezone", "applies only with cron")
	}
}

func readUntil(o object, _ Field, out map[string]any) { out["until"] = until(o) }

func readCron(o object, _ Field, out map[string]any) { out["cron"], out["timezone"] = cronSpec(o) }

// until reads an RFC 3339 time and normalises it to UTC.
func until(o object) string {
	s, ok := o.str("until")
	if !ok {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		o.problem("until", "must be an RFC 3339 time like 2025-01-02T15:04:05Z, not %q", s)
		return s
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// cronSpec checks a standard five-field cron expression and its timezone
// (default UTC).
func cronSpec(o object) (string, string) {
	spec, _ := o.str("cron")
	tz := o.strOr("timezone", "UTC")
	if _, err := time.LoadLocation(tz); err != nil {
		o.problem("timezone", "unknown timezone %q", tz)
	}
	if strings.Contains(spec, "TZ=") {
		o.problem("cron", "set the zone with timezone, not inside the cron expression")
		return spec, tz
	}
	if err := checkWaitCron(spec); err != nil {
		o.problem("cron", "invalid cron expression %q: %v", spec, err)
	}
	return spec, tz
}

// checkWaitCron checks a wait step's cron: five fields, a shorthand, or
// @every DURATION (a wait of that long).
func checkWaitCron(spec string) error {
	if d, ok := strings.CutPrefix(strings.TrimSpace(spec), "@every"); ok {
		if _, err := time.ParseDuration(strings.TrimSpace(d)); err != nil {
			return fmt.Errorf("@every needs a duration like \"@every 10m\"")
		}
		return nil
	}
	return schedule.CheckCron(spec)
}
