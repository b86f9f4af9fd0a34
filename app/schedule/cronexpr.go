package schedule

import (
	"fmt"
	"strconv"
	"strings"
)

// cronFields is a parsed cron expression: for each field, bit v is set
// when the value v matches. starBit marks a field written as * or ?
// (alone, or stepped by 1), which changes how days match (see dayMatches).
type cronFields struct {
	Minute, Hour, Dom, Month, Dow uint64
}

// starBit marks a field written as *.
const starBit = 1 << 63

// cronField is one field's name, bounds and value names.
type cronField struct {
	name     string
	min, max uint
	names    map[string]uint
}

var (
	cronMinute = cronField{name: "minute", min: 0, max: 59}
	cronHour   = cronField{name: "hour", min: 0, max: 23}
	cronDom    = cronField{name: "day-of-month", min: 1, max: 31}
	cronMonth  = cronField{name: "month", min: 1, max: 12, names: map[string]uint{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}}
	cronDow = cronField{name: "day-of-week", min: 0, max: 6, names: map[string]uint{
		"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	}}
)

// cronMacros are the shorthands for five fields.
var cronMacros = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
	"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

// parseCron reads a five-field expression (minute hour day-of-month month
// day-of-week) or one of cronMacros. Each field is a comma-separated list
// of *, ?, a value, a range a-b, each optionally stepped by /n (a/n runs
// from a to the field's end); months and days of the week may be named
// (JAN, mon, any case). An error names the field.
func parseCron(expr string) (*cronFields, error) {
	if strings.HasPrefix(expr, "@") {
		m, ok := cronMacros[strings.ToLower(expr)]
		if !ok {
			return nil, fmt.Errorf("unknown shorthand %q (known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every DURATION)", expr)
		}
		expr = m
	}
	fs := strings.Fields(expr)
	if len(fs) != 5 {
		return nil, fmt.Errorf("want five fields (minute hour day-of-month month day-of-week), not %d", len(fs))
	}
	var c cronFields
	for i, f := range []struct {
		field cronField
		dst   *uint64
	}{{cronMinute, &c.Minute}, {cronHour, &c.Hour}, {cronDom, &c.Dom}, {cronMonth, &c.Month}, {cronDow, &c.Dow}} {
		bits, err := f.field.parse(fs[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.field.name, err)
		}
		*f.dst = bits
	}
	return &c, nil
}

// parse reads one field: a comma-separated list of ranges.
func (f cronField) parse(s string) (uint64, error) {
	var out uint64
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
	if len(parts) == 0 {
		return 0, fmt.Errorf("a value is missing")
	}
	for _, part := range parts {
		b, err := f.parseRange(part)
		if err != nil {
			return 0, err
		}
		out |= b
	}
	return out, nil
}

// parseRange reads *, ?, N, N-M, each with an optional /STEP.
func (f cronField) parseRange(s string) (uint64, error) {
	rng, stepText, stepped := strings.Cut(s, "/")
	step := uint(1)
	if stepped {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("step %q is not a whole number from 1", stepText)
		}
		step = uint(n)
	}
	if rng == "*" || rng == "?" {
		b := bitRange(f.min, f.max, step)
		if step == 1 {
			b |= starBit
		}
		return b, nil
	}
	loText, hiText, isRange := strings.Cut(rng, "-")
	lo, err := f.value(loText)
	if err != nil {
		return 0, err
	}
	hi := lo
	switch {
	case isRange:
		if hi, err = f.value(hiText); err != nil {
			return 0, err
		}
	case stepped:
		hi = f.max // N/STEP runs to the field's end
	}
	if hi < lo {
		return 0, fmt.Errorf("range %q ends before it starts", rng)
	}
	return bitRange(lo, hi, step), nil
}

// value reads a number within the field's bounds, or a name.
func (f cronField) value(s string) (uint, error) {
	if v, ok := f.names[strings.ToLower(s)]; ok {
		return v, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		if s == "" {
			return 0, fmt.Errorf("a value is missing")
		}
		return 0, fmt.Errorf("%q is not a number%s", s, f.namesHint())
	}
	if n < int(f.min) || n > int(f.max) {
		return 0, fmt.Errorf("%d is out of range (%d-%d)", n, f.min, f.max)
	}
	return uint(n), nil
}

func (f cronField) namesHint() string {
	switch f.name {
	case cronMonth.name:
		return " or a month (JAN-DEC)"
	case cronDow.name:
		return " or a day (SUN-SAT)"
	}
	return ""
}

// bitRange sets the bits lo, lo+step, … up to hi.
func bitRange(lo, hi, step uint) uint64 {
	var b uint64
	for v := lo; v <= hi; v += step {
		b |= 1 << v
	}
	return b
}
