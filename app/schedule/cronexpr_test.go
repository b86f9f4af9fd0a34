package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The standard five-field syntax: values, ranges, steps, lists, names
// (any case), ? as *, and the shorthands; 2024-06-01 is a Saturday.
func TestCronSyntax(t *testing.T) {
	t.Parallel()
	from := "2024-06-01T00:00:00Z"
	cases := []struct {
		cron string
		want []string
	}{
		{"0 8 * * 1-5", []string{"2024-06-03T08:00:00Z", "2024-06-04T08:00:00Z"}},
		{"0 8 * * MON-fri", []string{"2024-06-03T08:00:00Z", "2024-06-04T08:00:00Z"}},
		{"*/20 1 * * *", []string{"2024-06-01T01:00:00Z", "2024-06-01T01:20:00Z", "2024-06-01T01:40:00Z", "2024-06-02T01:00:00Z"}},
		{"5/15 0 * * *", []string{"2024-06-01T00:05:00Z", "2024-06-01T00:20:00Z", "2024-06-01T00:35:00Z", "2024-06-01T00:50:00Z"}},
		{"1-9/4,30 0 * * *", []string{"2024-06-01T00:01:00Z", "2024-06-01T00:05:00Z", "2024-06-01T00:09:00Z", "2024-06-01T00:30:00Z"}},
		{"0 0-23/12 * * *", []string{"2024-06-01T12:00:00Z", "2024-06-02T00:00:00Z"}},
		{"0 12 ? * WED", []string{"2024-06-05T12:00:00Z", "2024-06-12T12:00:00Z"}},
		{"0 0 1 jan,Jul *", []string{"2024-07-01T00:00:00Z", "2025-01-01T00:00:00Z"}},
		{"0 0 29 2 *", []string{"2028-02-29T00:00:00Z"}},
		// Both days restricted: either matches (the 13th, or a Friday).
		{"0 0 13 * 5", []string{"2024-06-07T00:00:00Z", "2024-06-13T00:00:00Z", "2024-06-14T00:00:00Z"}},
		// One of them *: both must (every Friday).
		{"0 0 * * 5", []string{"2024-06-07T00:00:00Z", "2024-06-14T00:00:00Z"}},
		{"0 0 */1 * 5", []string{"2024-06-07T00:00:00Z", "2024-06-14T00:00:00Z"}},
		{"@hourly", []string{"2024-06-01T01:00:00Z", "2024-06-01T02:00:00Z"}},
		{"@daily", []string{"2024-06-02T00:00:00Z", "2024-06-03T00:00:00Z"}},
		{"@midnight", []string{"2024-06-02T00:00:00Z"}},
		{"@weekly", []string{"2024-06-02T00:00:00Z", "2024-06-09T00:00:00Z"}},
		{"@monthly", []string{"2024-07-01T00:00:00Z", "2024-08-01T00:00:00Z"}},
		{"@yearly", []string{"2025-01-01T00:00:00Z"}},
		{"@annually", []string{"2025-01-01T00:00:00Z"}},
	}
	for _, c := range cases {
		sc := mustNew(t, Spec{Cron: c.cron})
		equal(t, c.cron, nexts(sc, at(t, from), len(c.want), time.UTC), c.want)
	}
	if got := mustNew(t, Spec{Cron: "0 0 31 2 *"}).Next(at(t, from)); !got.IsZero() {
		t.Errorf("February 31st came: %v", got)
	}
}

// A bad expression is a problem with cron whose message names the field
// and says what is wrong with it.
func TestCronErrorsNameTheField(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"* * * *":            "want five fields",
		"* * * * * *":        "want five fields",
		"61 * * * *":         "minute: 61 is out of range (0-59)",
		"* 24 * * *":         "hour: 24 is out of range (0-23)",
		"* * 0 * *":          "day-of-month: 0 is out of range (1-31)",
		"* * * 13 *":         "month: 13 is out of range (1-12)",
		"* * * * 7":          "day-of-week: 7 is out of range (0-6)",
		"5-1 * * * *":        "minute: range \"5-1\" ends before it starts",
		"*/0 * * * *":        "minute: step \"0\" is not a whole number from 1",
		"* x * * *":          "hour: \"x\" is not a number",
		"* * * foo *":        "month: \"foo\" is not a number or a month (JAN-DEC)",
		"* * * * jan":        "day-of-week: \"jan\" is not a number or a day (SUN-SAT)",
		"1- * * * *":         "minute: a value is missing",
		"* * , * *":          "day-of-month: a value is missing",
		"0 0 L * *":          "day-of-month: \"L\" is not a number",
		"1-2-3 * * * *":      "minute: \"2-3\" is not a number",
		"@reboot":            "unknown shorthand \"@reboot\"",
		"CRON_TZ=UTC @daily": "set the zone with timezone",
	}
	for expr, want := range cases {
		_, err := New(Spec{Cron: expr})
		var p *Problem
		if !errors.As(err, &p) || p.Field != "cron" || !strings.Contains(p.Message, want) {
			t.Errorf("cron %q: %v, want a cron problem saying %q", expr, err, want)
		}
	}
	if err := CheckCron("61 * * * *"); err == nil || err.Error() != "minute: 61 is out of range (0-59)" {
		t.Errorf("CheckCron(61 * * * *) = %v", err)
	}
	if err := CheckCron("0 8 * * tue"); err != nil {
		t.Errorf("CheckCron(0 8 * * tue) = %v", err)
	}
}
