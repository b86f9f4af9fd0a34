// Package schedule computes when a schedule acts: the next times of a
// cron expression or an interval in the schedule's time zone, a
// deterministic jitter per schedule and time, which missed times an
// outage leaves to catch up on, and the overlap policies that decide what
// an action does while an earlier run still runs.
//
// It is pure: nothing here reads a clock or does I/O. Callers pass the
// time to compute from (the database's ductor_now() in the firing loop).
//
// # Times
//
// An interval schedule acts at every Unix epoch + offset + k × interval:
// absolute times, unaffected by time zones. A cron schedule acts at every
// wall-clock time of its time zone that the five fields match, shifted by
// the offset. Daylight saving time changes the wall clock, so:
//
//   - a time that a spring-forward skips acts once, as late as the skip
//     (02:30 in a zone that jumps from 02:00 to 03:00 acts at 03:30);
//   - a time that a fall-back repeats acts once, at its first occurrence.
//
// Start and end bound the times: none before start, none after end.
package schedule
