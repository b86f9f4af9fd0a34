package engine

import (
	"strings"
	"testing"
	"time"
)

// A wait's cron follows the schedules' rules: its zone, a time a
// spring-forward skips acts as late as the skip, @every waits whole
// seconds, and a bad expression names the field.
func TestWaitCronNext(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 3, 30, 12, 0, 0, 500, time.UTC)
	cases := []struct {
		w    with
		want string
	}{
		{with{"cron": "0 9 * * MON-FRI"}, "2024-04-01T09:00:00Z"},
		{with{"cron": "30 2 * * *", "timezone": "Europe/Paris"}, "2024-03-31T01:30:00Z"},
		{with{"cron": "@daily", "timezone": "UTC"}, "2024-03-31T00:00:00Z"},
		{with{"cron": "@every 90s"}, "2024-03-30T12:01:30Z"},
	}
	for _, c := range cases {
		d := &decider{now: now}
		got, err := d.cronNext(c.w)
		if err != nil || got.UTC().Format(time.RFC3339Nano) != c.want {
			t.Errorf("%v: %v, %v; want %s", c.w, got, err, c.want)
		}
	}
	for w, want := range map[string]with{
		"with.cron: invalid cron expression \"61 * * * *\": minute: 61": {"cron": "61 * * * *"},
		"with.timezone: unknown time zone":                              {"cron": "@daily", "timezone": "Mars/Olympus"},
	} {
		if _, err := (&decider{now: now}).cronNext(want); err == nil || !strings.HasPrefix(err.Message, w) {
			t.Errorf("%v: %v, want %q", want, err, w)
		}
	}
}
