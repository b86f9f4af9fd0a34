package definition

import (
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // timezones load the same on every machine

	"github.com/ductor/ductor/app/expr"
	"github.com/robfig/cron/v3"
)

// namePattern bounds checkpoint, signal and event names.
var namePattern = regexp.MustCompile(`^\S{1,128}$`)

func (o object) name() string {
	n := o.required("name")
	if n != "" && !namePattern.MatchString(n) {
		o.problem("name", "must be 1 to 128 characters without spaces, not %q", n)
	}
	return n
}

// timeout reads a parking step's optional timeout; 0 means none.
func (o object) timeout(out map[string]any) {
	out["timeout_ms"] = o.durationMS("timeout", 0)
}

func withSubworkflow(c *checker, o object, out map[string]any) {
	o.known("workflow", "version", "mode", "wait_for", "input_expr", "timeout", "on_timeout", "repeat")
	out["workflow"] = workflowKey(o)
	out["version"] = o.intOr("version", 0, 1, 1<<31-1)
	mode := o.enum("mode", "sync", "sync", "async")
	out["mode"] = mode
	out["wait_for"] = waitFor(o)
	if s, ok := o.exprScoped("input_expr", expr.KindAny, repeatScope(o)...); ok {
		out["input_expr"] = s
	}
	o.timeout(out)
	out["on_timeout"] = o.enum("on_timeout", "fail_parent", "fail_parent", "detach", "continue_with_error")
	c.repeat(o, out)
	if mode == "async" {
		for _, k := range []string{"wait_for", "timeout", "on_timeout"} {
			if o.has(k) {
				o.problem(k, "applies only in sync mode: an async parent does not wait")
			}
		}
	}
}

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

func withCheckpoint(_ *checker, o object, out map[string]any) {
	o.known("name", "output_expr")
	out["name"] = o.name()
	o.exprInto(out, "output_expr", expr.KindAny)
}

func withWait(_ *checker, o object, out map[string]any) {
	o.known("duration", "until", "cron", "timezone", "until_expr")
	which := o.oneOf(false, "duration", "until", "cron", "until_expr")
	if o.has("timezone") && which != "cron" {
		o.problem("timezone", "applies only with cron")
	}
	switch which {
	case "duration":
		out["duration_ms"] = o.durationMS("duration", 0)
	case "until":
		out["until"] = until(o)
	case "cron":
		out["cron"], out["timezone"] = cronSpec(o)
	case "until_expr":
		o.exprInto(out, "until_expr", expr.KindTimestamp)
	}
}

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
	if _, err := cron.ParseStandard(spec); err != nil {
		o.problem("cron", "invalid cron expression %q: %v", spec, err)
	}
	return spec, tz
}
