package schedule

import (
	"hash/fnv"
	"time"
)

// Next returns the first time strictly after after at which the schedule
// acts (its nominal time, before jitter), or the zero time when there is
// none (past the end, or a cron expression that never matches).
func (sc *Schedule) Next(after time.Time) time.Time {
	if st := sc.spec.StartAt; st != nil && after.Before(*st) {
		after = st.Add(-time.Nanosecond)
	}
	var t time.Time
	if sc.cron == nil {
		t = sc.nextInterval(after)
	} else {
		t = sc.nextCron(after.Add(-sc.offset))
		if !t.IsZero() {
			t = t.Add(sc.offset)
		}
	}
	if end := sc.spec.EndAt; t.IsZero() || (end != nil && t.After(*end)) {
		return time.Time{}
	}
	return t
}

// nextInterval is the first epoch + offset + k × interval after after.
func (sc *Schedule) nextInterval(after time.Time) time.Time {
	iv, off := sc.interval.Nanoseconds(), sc.offset.Nanoseconds()
	base := after.UnixNano() - off
	k := base / iv
	if base%iv < 0 {
		k-- // floor, not truncation, before the epoch
	}
	return time.Unix(0, (k+1)*iv+off).UTC()
}

// Jitter is how long the action of the schedule keyed key at nominal time
// at waits: a fraction of the spec's jitter fixed by (key, at), so every
// replica and every retry computes the same.
func (sc *Schedule) Jitter(key string, at time.Time) time.Duration {
	j := sc.spec.Jitter.D()
	if j <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte(at.UTC().Format(time.RFC3339Nano)))
	return time.Duration(h.Sum64() % uint64(j))
}

// Between lists the nominal times in [from, to), at most limit of them;
// more reports that the range holds more.
func (sc *Schedule) Between(from, to time.Time, limit int) (times []time.Time, more bool) {
	for t := sc.Next(from.Add(-time.Nanosecond)); !t.IsZero() && t.Before(to); t = sc.Next(t) {
		if len(times) == limit {
			return times, true
		}
		times = append(times, t)
	}
	return times, false
}
