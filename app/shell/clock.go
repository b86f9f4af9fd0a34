package shell

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Every time that gates a wake-up is the database's: timers, retries'
// backoff, leases, rescues, the sync-child and signal wakes all reach a
// run as inputs its tick drains, and ticks decide with ductor_now(); the
// sweep compares due timers, dispatches, leases and stranded jobs with
// the database's clock too. What a process's own clock still does is
// measure its own waits (backoffs, the yield gate, caches, metrics),
// never compared with a time the database wrote.
//
// River writes a few times from the process's clock, and the ones that
// would gate a wake-up are taken care of here:
//
//   - a job inserted without a scheduled_at gets the process's now, and
//     River fetches a job only once the database's now() has passed its
//     scheduled_at: with the database 30 s behind, every tick job (every
//     signal, timer and child wake) waited 30 s. readyMiddleware gives
//     such jobs a scheduled_at long past by any clock instead (fair-tagged
//     step jobs carry tags the database computed);
//   - a failed job's retry is scheduled from the process's now:
//     TickWorker.NextRetry schedules it from River's attempted_at, the
//     database's clock;
//   - a snoozed job (a step whose start could not be recorded) gets the
//     process's now plus the snooze: the sweep puts it back at the head of
//     its queue by the database's clock (StepJobsRetag);
//   - River's rescuer compares attempted_at with the process's clock, an
//     hour back: Ductor's sweep finalizes the jobs of lost attempts and
//     dead ticks long before, by the database's clock (reportLost,
//     rescueTicks), and River's rescuer never retries a step job.
//
// TestWakeUpsFollowTheDatabaseClock (app/checker) runs Postgres 30 s
// ahead of the processes and 30 s behind them and measures the wake-ups.

// readyAtOnce is the scheduled_at of a job that is available at once: a
// time in the past of any clock a database might keep. Jobs that share
// it are fetched in insertion order.
var readyAtOnce = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// readyMiddleware gives jobs inserted without a scheduled_at readyAtOnce
// instead of River's default, this process's clock (see above).
type readyMiddleware struct {
	river.MiddlewareDefaults
}

// InsertMany sets the scheduled_at River would have taken from this
// process's clock.
func (*readyMiddleware) InsertMany(ctx context.Context, many []*rivertype.JobInsertParams,
	doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	for _, p := range many {
		if p.ScheduledAt == nil && p.State == rivertype.JobStateAvailable {
			at := readyAtOnce
			p.ScheduledAt = &at
		}
	}
	return doInner(ctx)
}
