package schedule

import (
	"time"
)

// maxCronDays bounds the search for a cron expression's next match (one
// that never matches, such as "0 0 30 2 *", would search forever).
const maxCronDays = 5*366 + 1

// nextCron is the first wall-clock time of the zone matching the cron
// fields that falls strictly after after. Candidates are local times,
// resolved to instants one by one (see resolve): a time a spring-forward
// skips resolves later than its wall clock, so the earliest instant of
// a day is not always its earliest local time.
func (sc *Schedule) nextCron(after time.Time) time.Time {
	local := after.In(sc.loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC)
	var best time.Time
	pending := false // a shifted candidate waits for the next matching day
	for i := 0; i < maxCronDays; i++ {
		d := day.AddDate(0, 0, i)
		if !sc.dayMatches(d) {
			continue
		}
		fromHour := 0
		if i == 0 {
			fromHour = local.Hour() - 3 // no zone shifts its clock by more than 3 h
		}
		t, exact := sc.firstOfDay(d, fromHour, after)
		best = earliest(best, t)
		if exact || pending {
			return best
		}
		pending = !best.IsZero()
	}
	return best
}

// firstOfDay scans a day's matching local times in order for the first
// instant after after. exact is true when that instant is a local time
// that exists (no later local time can resolve earlier); a skipped time
// shifted by a spring-forward is kept as a candidate, and the scan goes
// on in case a later local time resolves earlier.
func (sc *Schedule) firstOfDay(d time.Time, fromHour int, after time.Time) (best time.Time, exact bool) {
	for h := max(fromHour, 0); h < 24; h++ {
		if sc.cron.Hour&(1<<uint(h)) == 0 {
			continue
		}
		for m := 0; m < 60; m++ {
			if sc.cron.Minute&(1<<uint(m)) == 0 {
				continue
			}
			t, shifted := resolve(d.Year(), d.Month(), d.Day(), h, m, sc.loc)
			if !t.After(after) {
				continue
			}
			best = earliest(best, t)
			if !shifted {
				return best, true
			}
		}
	}
	return best, false
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// dayMatches applies cron's day rule: with both day-of-month and
// day-of-week restricted, either may match; otherwise both must.
func (sc *Schedule) dayMatches(d time.Time) bool {
	s := sc.cron
	if s.Month&(1<<uint(d.Month())) == 0 {
		return false
	}
	dom := s.Dom&(1<<uint(d.Day())) != 0
	dow := s.Dow&(1<<uint(d.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// resolve turns a wall-clock time of loc into an instant. A time that
// occurs twice (a fall-back) resolves to its first occurrence; one that
// does not occur (a spring-forward) resolves as late as the skip, and
// shifted reports it.
func resolve(y int, mo time.Month, d, h, mi int, loc *time.Location) (t time.Time, shifted bool) {
	u := time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
	var offsets []int
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := u.Add(probe).In(loc).Zone()
		if !containsInt(offsets, off) {
			offsets = append(offsets, off)
		}
	}
	var first, latest time.Time
	for _, off := range offsets {
		c := u.Add(-time.Duration(off) * time.Second)
		if w := c.In(loc); w.Hour() == h && w.Minute() == mi && w.Day() == d {
			first = earliest(first, c)
		}
		if latest.IsZero() || c.After(latest) {
			latest = c
		}
	}
	if !first.IsZero() {
		return first, false
	}
	return latest, true
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
