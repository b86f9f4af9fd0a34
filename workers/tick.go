package workers

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/shell"
)

// TickWorker runs coordinator ticks.
type TickWorker struct {
	river.WorkerDefaults[shell.TickArgs]
	C *shell.Ticker
}

// Work runs one tick of the run.
func (w *TickWorker) Work(ctx context.Context, job *river.Job[shell.TickArgs]) error {
	return w.C.Tick(ctx, job.Args.TenantID, job.Args.RunID)
}

// NextRetry schedules a failed tick again a short backoff after River's
// attempted_at, the database's clock when the job was fetched, rather
// than River's default, computed from this process's clock: a process
// whose clock is ahead of the database's would hold the retry back by the
// difference. River fetches it once that time has passed by the
// database's clock.
func (w *TickWorker) NextRetry(job *river.Job[shell.TickArgs]) time.Time {
	if job.AttemptedAt == nil {
		return time.Time{} // River's default
	}
	return job.AttemptedAt.Add(tickRetryDelay(job.Attempt))
}

// tickRetryDelay is the wait before a failed tick's next attempt: 100 ms
// doubling to at most 30 s (a tick fails while the database restarts, or
// on a bug, which 25 attempts over ten minutes leave time to report).
func tickRetryDelay(attempt int) time.Duration {
	d := 100 * time.Millisecond
	for i := 1; i < attempt && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}
