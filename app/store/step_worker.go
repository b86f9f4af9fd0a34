package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/queries"
)

// StepWorkerSeen records that a process works the step queues, by the
// database's clock, and forgets processes not seen for forget.
func (s *Store) StepWorkerSeen(ctx context.Context, processID uuid.UUID, queues []string, forget time.Duration) error {
	if err := s.q.StepWorkerSeen(ctx, queries.StepWorkerSeenParams{ProcessID: processID, Queues: queues}); err != nil {
		return fmt.Errorf("record step worker: %w", err)
	}
	if err := s.q.StepWorkerForget(ctx, forget.Seconds()); err != nil {
		return fmt.Errorf("forget step workers: %w", err)
	}
	return nil
}

// StepWorkerGone removes a process that stops working the step queues.
func (s *Store) StepWorkerGone(ctx context.Context, processID uuid.UUID) error {
	if err := s.q.StepWorkerGone(ctx, processID); err != nil {
		return fmt.Errorf("remove step worker: %w", err)
	}
	return nil
}

// StepQueuesUnserved returns the queues among queues that no process was
// seen working within alive.
func (s *Store) StepQueuesUnserved(ctx context.Context, queues []string, alive time.Duration) ([]string, error) {
	out, err := s.q.StepQueuesUnserved(ctx, queries.StepQueuesUnservedParams{Queues: queues, Alive: alive.Seconds()})
	if err != nil {
		return nil, fmt.Errorf("find unserved step queues: %w", err)
	}
	return out, nil
}

// UnservedJob is a task's step job that no worker took in time: its
// queue and its arguments.
type UnservedJob struct {
	Queue string
	Args  []byte
}

// stepJobsCancelUnserved cancels the task step jobs of queues still
// available past their schedule_to_start, by the database's clock
// (created_at is River's insert time, from the database). SKIP LOCKED
// leaves a job a worker is fetching to the worker. River's tables are not
// in sqlc's schema, so this query is written by hand.
const stepJobsCancelUnserved = `WITH late AS (
    SELECT id FROM river_job
    WHERE state = 'available' AND kind = 'ductor.step' AND queue = ANY($1::text[])
      AND args->>'type' = 'task' AND (args->>'schedule_to_start_ms')::bigint > 0
      AND created_at + (args->>'schedule_to_start_ms')::bigint * interval '1 millisecond' <= ductor_now()
    ORDER BY id
    LIMIT $2
    FOR UPDATE SKIP LOCKED)
UPDATE river_job j SET state = 'cancelled', finalized_at = now()
FROM late WHERE j.id = late.id
RETURNING j.queue, j.args`

// StepJobsCancelUnserved cancels up to limit task step jobs of queues
// that waited past their schedule_to_start without a worker, and returns
// them for their attempts to be failed.
func (s *Store) StepJobsCancelUnserved(ctx context.Context, queues []string, limit int) ([]UnservedJob, error) {
	rows, err := s.db.Query(ctx, stepJobsCancelUnserved, queues, limit)
	if err != nil {
		return nil, fmt.Errorf("cancel unserved step jobs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[UnservedJob])
	if err != nil {
		return nil, fmt.Errorf("cancel unserved step jobs: %w", err)
	}
	return jobs, nil
}
