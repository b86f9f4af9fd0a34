package workers

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
)

// stepWorkerForget is how long the row of a process that vanished
// without saying so is kept.
const stepWorkerForget = time.Hour

// HeartbeatSteps records, until ctx ends, that this process works the
// step queues; then it removes the record. Run it beside a River client
// that works them (Options.Steps).
func HeartbeatSteps(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) {
	s, id := store.New(pool), uuid.New()
	t := time.NewTicker(shell.StepBeatEvery)
	defer t.Stop()
	for {
		if err := s.StepWorkerSeen(ctx, id, shell.StepQueues(), stepWorkerForget); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "record that this process works the step queues", "err", err)
		}
		select {
		case <-ctx.Done():
			gone, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := s.StepWorkerGone(gone, id); err != nil {
				log.Warn("remove this process from the step workers", "err", err)
			}
			return
		case <-t.C:
		}
	}
}
