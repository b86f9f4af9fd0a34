package schedule

import (
	"errors"
	"testing"
	"time"
)

func mustNew(t *testing.T, s Spec) *Schedule {
	t.Helper()
	sc, err := New(s)
	if err != nil {
		t.Fatalf("New(%+v): %v", s, err)
	}
	return sc
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nexts lists the n times after from, in RFC 3339 with their offsets in
// the zone.
func nexts(sc *Schedule, from time.Time, n int, zone *time.Location) []string {
	var out []string
	for t := from; len(out) < n; {
		t = sc.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t.In(zone).Format(time.RFC3339))
	}
	return out
}

func equal(t *testing.T, name string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", name, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
	}
}

func TestIntervalCountsFromTheEpochPlusOffset(t *testing.T) {
	t.Parallel()
	sc := mustNew(t, Spec{Interval: Duration(time.Hour), Offset: Duration(15 * time.Minute)})
	got := nexts(sc, at(t, "2024-05-01T10:15:00Z"), 3, time.UTC)
	equal(t, "hourly at :15", got, []string{"2024-05-01T11:15:00Z", "2024-05-01T12:15:00Z", "2024-05-01T13:15:00Z"})
	sec := mustNew(t, Spec{Interval: Duration(time.Second)})
	if n := sec.Next(at(t, "2024-05-01T10:00:00Z").Add(300 * time.Millisecond)); !n.Equal(at(t, "2024-05-01T10:00:01Z")) {
		t.Errorf("1s interval next = %v", n)
	}
	if n := sec.Next(time.Unix(-3, 500)); n.Unix() != -2 {
		t.Errorf("before the epoch: next = %v", n.Unix())
	}
}

func TestCronInATimeZone(t *testing.T) {
	t.Parallel()
	paris, _ := time.LoadLocation("Europe/Paris")
	sc := mustNew(t, Spec{Cron: "0 8 * * 1-5", Timezone: "Europe/Paris"})
	got := nexts(sc, at(t, "2024-06-07T09:00:00+02:00"), 3, paris) // a Friday
	equal(t, "weekdays at 8", got, []string{"2024-06-10T08:00:00+02:00", "2024-06-11T08:00:00+02:00", "2024-06-12T08:00:00+02:00"})
	daily := mustNew(t, Spec{Cron: "@daily", Timezone: "Europe/Paris", Offset: Duration(90 * time.Minute)})
	equal(t, "@daily + 90m", nexts(daily, at(t, "2024-06-07T09:00:00+02:00"), 1, paris), []string{"2024-06-08T01:30:00+02:00"})
}

// Europe/Paris jumps from 02:00 to 03:00 on 2024-03-31 and falls back
// from 03:00 to 02:00 on 2024-10-27.
func TestCronAcrossDaylightSavingTime(t *testing.T) {
	t.Parallel()
	paris, _ := time.LoadLocation("Europe/Paris")
	cases := []struct {
		name, cron, from string
		want             []string
	}{
		{"a skipped time acts as late as the skip", "30 2 * * *", "2024-03-29T12:00:00+01:00",
			[]string{"2024-03-30T02:30:00+01:00", "2024-03-31T03:30:00+02:00", "2024-04-01T02:30:00+02:00"}},
		{"a repeated time acts once", "30 2 * * *", "2024-10-26T12:00:00+02:00",
			[]string{"2024-10-27T02:30:00+02:00", "2024-10-28T02:30:00+01:00"}},
		{"hourly over the spring-forward", "0 * * * *", "2024-03-31T00:30:00+01:00",
			[]string{"2024-03-31T01:00:00+01:00", "2024-03-31T03:00:00+02:00", "2024-03-31T04:00:00+02:00"}},
		{"hourly over the fall-back: each wall-clock hour once", "0 * * * *", "2024-10-27T00:30:00+02:00",
			[]string{"2024-10-27T01:00:00+02:00", "2024-10-27T02:00:00+02:00", "2024-10-27T03:00:00+01:00"}},
		{"a shifted time does not hide a later real one", "30 2 * * *", "2024-03-31T01:59:00+01:00",
			[]string{"2024-03-31T03:30:00+02:00"}},
		{"daily keeps its wall clock across the change", "0 9 * * *", "2024-03-30T10:00:00+01:00",
			[]string{"2024-03-31T09:00:00+02:00", "2024-04-01T09:00:00+02:00"}},
	}
	for _, c := range cases {
		sc := mustNew(t, Spec{Cron: c.cron, Timezone: "Europe/Paris"})
		equal(t, c.name, nexts(sc, at(t, c.from), len(c.want), paris), c.want)
	}
}

// A spec with 02:30 and 03:00 on the spring-forward day: the skipped 02:30
// resolves to 03:30, after the real 03:00, and both act, in time order.
func TestCronShiftedTimeAfterARealOne(t *testing.T) {
	t.Parallel()
	paris, _ := time.LoadLocation("Europe/Paris")
	sc := mustNew(t, Spec{Cron: "0,30 2,3 * * *", Timezone: "Europe/Paris"})
	got := nexts(sc, at(t, "2024-03-31T01:00:00+01:00"), 3, paris)
	equal(t, "02:00, 02:30, 03:00, 03:30 on the skip", got, []string{"2024-03-31T03:00:00+02:00", "2024-03-31T03:30:00+02:00", "2024-04-01T02:00:00+02:00"})
}

func TestNewReportsTheField(t *testing.T) {
	t.Parallel()
	start := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	cases := map[string]Spec{
		"cron":     {},
		"interval": {Cron: "* * * * *", Interval: Duration(time.Minute)},
		"timezone": {Cron: "* * * * *", Timezone: "Mars/Olympus"},
		"offset":   {Interval: Duration(time.Minute), Offset: Duration(time.Minute)},
		"jitter":   {Interval: Duration(time.Minute), Jitter: Duration(-1)},
		"end_at":   {Interval: Duration(time.Minute), StartAt: &start, EndAt: &start},
	}
	for field, s := range cases {
		_, err := New(s)
		var p *Problem
		if !errors.As(err, &p) || p.Field != field || !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%+v) = %v, want a problem with %s", s, err, field)
		}
	}
	for _, bad := range []string{"* * * *", "61 * * * *", "CRON_TZ=UTC * * * * *", "@every nope", "@every 10ms"} {
		if _, err := New(Spec{Cron: bad}); err == nil {
			t.Errorf("cron %q accepted", bad)
		}
	}
	if _, err := New(Spec{Interval: Duration(time.Minute), Timezone: "UTC"}); err == nil {
		t.Errorf("a time zone on an interval accepted")
	}
}

func TestEveryIsAnInterval(t *testing.T) {
	t.Parallel()
	sc := mustNew(t, Spec{Cron: "@every 10m"})
	if !sc.IsInterval() || !sc.Next(at(t, "2024-01-01T00:05:00Z")).Equal(at(t, "2024-01-01T00:10:00Z")) {
		t.Errorf("@every 10m is not a 10m interval")
	}
}

func TestStartAndEndBoundTheTimes(t *testing.T) {
	t.Parallel()
	start, end := at(t, "2024-01-01T00:10:00Z"), at(t, "2024-01-01T00:30:00Z")
	sc := mustNew(t, Spec{Interval: Duration(10 * time.Minute), StartAt: &start, EndAt: &end})
	got := nexts(sc, at(t, "2023-12-31T00:00:00Z"), 5, time.UTC)
	equal(t, "bounded", got, []string{"2024-01-01T00:10:00Z", "2024-01-01T00:20:00Z", "2024-01-01T00:30:00Z"})
}

func TestJitterIsDeterministicAndBounded(t *testing.T) {
	t.Parallel()
	sc := mustNew(t, Spec{Interval: Duration(time.Minute), Jitter: Duration(30 * time.Second)})
	t0 := at(t, "2024-01-01T00:00:00Z")
	seen := map[time.Duration]bool{}
	for i := range 50 {
		ti := t0.Add(time.Duration(i) * time.Minute)
		j := sc.Jitter("s1", ti)
		if j < 0 || j >= 30*time.Second || j != sc.Jitter("s1", ti) {
			t.Fatalf("jitter %v out of bounds or not stable", j)
		}
		seen[j] = true
	}
	if len(seen) < 40 {
		t.Errorf("jitter barely varies: %d distinct values of 50", len(seen))
	}
	if sc.Jitter("s1", t0) == sc.Jitter("s2", t0) && sc.Jitter("s1", t0.Add(time.Minute)) == sc.Jitter("s2", t0.Add(time.Minute)) {
		t.Errorf("jitter does not depend on the schedule")
	}
}

func TestDueCatchesUpWithinTheWindow(t *testing.T) {
	t.Parallel()
	sc := mustNew(t, Spec{Interval: Duration(time.Minute)})
	next, now := at(t, "2024-01-01T00:00:00Z"), at(t, "2024-01-01T02:00:30Z")
	p := sc.Due("s", next, now, 10*time.Minute, 100)
	if p.Missed != 111 || len(p.Act) != 10 || !p.Act[0].Equal(at(t, "2024-01-01T01:51:00Z")) || !p.Next.Equal(at(t, "2024-01-01T02:01:00Z")) {
		t.Errorf("pass = missed %d, act %d from %v, next %v", p.Missed, len(p.Act), p.Act, p.Next)
	}
	p = sc.Due("s", next, now, 10*time.Minute, 3)
	if len(p.Act) != 3 || !p.Next.Equal(at(t, "2024-01-01T01:54:00Z")) {
		t.Errorf("limited pass = act %v, next %v", p.Act, p.Next)
	}
	cr := mustNew(t, Spec{Cron: "*/10 * * * *"})
	p = cr.Due("s", next, now, 30*time.Minute, 100)
	if p.Missed != 10 || len(p.Act) != 3 {
		t.Errorf("cron pass = missed %d, act %v", p.Missed, p.Act)
	}
}

func TestDueWaitsForTheJitter(t *testing.T) {
	t.Parallel()
	sc := mustNew(t, Spec{Interval: Duration(time.Minute), Jitter: Duration(50 * time.Second)})
	next := at(t, "2024-01-01T00:00:00Z")
	j := sc.Jitter("s", next)
	if p := sc.Due("s", next, next.Add(j-time.Millisecond), time.Hour, 10); len(p.Act) != 0 {
		t.Errorf("acted before its jitter")
	}
	if p := sc.Due("s", next, next.Add(j), time.Hour, 10); len(p.Act) != 1 {
		t.Errorf("did not act once its jitter passed")
	}
}

func TestBetweenIsHalfOpen(t *testing.T) {
	t.Parallel()
	sc := mustNew(t, Spec{Cron: "@hourly"})
	times, more := sc.Between(at(t, "2024-01-01T00:00:00Z"), at(t, "2024-01-01T03:00:00Z"), 10)
	if len(times) != 3 || more || !times[0].Equal(at(t, "2024-01-01T00:00:00Z")) {
		t.Errorf("between = %v %v", times, more)
	}
	if _, more := sc.Between(at(t, "2024-01-01T00:00:00Z"), at(t, "2024-01-02T00:00:00Z"), 10); !more {
		t.Errorf("a day of hours fits in 10")
	}
}

func TestOverlapDecisions(t *testing.T) {
	t.Parallel()
	type d struct {
		v    Verdict
		stop bool
	}
	cases := []struct {
		o                 Overlap
		running, buffered int
		want              d
	}{
		{OverlapSkip, 0, 0, d{Start, false}},
		{OverlapSkip, 1, 0, d{Skip, false}},
		{OverlapBufferOne, 1, 0, d{Buffer, false}},
		{OverlapBufferOne, 1, 1, d{Skip, false}},
		{OverlapBufferAll, 1, 5, d{Buffer, false}},
		{OverlapBufferAll, 1, MaxBuffered, d{Skip, false}},
		{OverlapCancelOther, 1, 0, d{Buffer, true}},
		{OverlapTerminateOther, 1, 0, d{Start, true}},
		{OverlapAllowAll, 3, 0, d{Start, false}},
	}
	for _, c := range cases {
		v, stop := c.o.Decide(c.running, c.buffered)
		if (d{v, stop}) != c.want {
			t.Errorf("%s running %d buffered %d = %v %v, want %v", c.o, c.running, c.buffered, v, stop, c.want)
		}
	}
	if _, err := ParseOverlap("sometimes"); err == nil {
		t.Errorf("unknown policy accepted")
	}
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{10 * time.Minute: "10m", 90 * time.Minute: "1h30m", time.Second: "1s", 2 * time.Hour: "2h"} {
		if got := Duration(d).String(); got != want {
			t.Errorf("%v formats as %q, want %q", d, got, want)
		}
	}
	var d Duration
	if err := d.UnmarshalJSON([]byte(`"PT1H"`)); err != nil || d.D() != time.Hour {
		t.Errorf("PT1H = %v %v", d, err)
	}
}
