package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/queries"
)

// stepJobsRunning finds the River jobs executing one attempt through
// River's GIN index on args. River's tables are not in sqlc's schema, so
// this one query is written by hand.
const stepJobsRunning = `SELECT id FROM river_job
WHERE kind = 'ductor.step' AND state = 'running' AND args @> $1::jsonb`

// StepJobsRunning returns the ids of running step jobs of one attempt.
func (s *Store) StepJobsRunning(ctx context.Context, tenantID, runID uuid.UUID, node string, generation, attempt int) ([]int64, error) {
	match, err := json.Marshal(map[string]any{
		"tenant_id": tenantID, "run_id": runID, "node": node, "generation": generation, "attempt": attempt,
	})
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, stepJobsRunning, match)
	if err != nil {
		return nil, fmt.Errorf("find step jobs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("find step jobs: %w", err)
	}
	return ids, nil
}

// queueHead is the start tag of the next job River will fetch from a
// queue: its earliest available job, or a day ago when it is empty (the
// anchor fair tags start from; virtual time advances far slower than real
// time, so tags stay in the past).
const queueHead = `SELECT coalesce(min(scheduled_at), now() - interval '24 hours')
FROM river_job WHERE state = 'available' AND queue = $1 AND priority = 1`

// QueueHead returns a queue's fair-queueing head.
func (s *Store) QueueHead(ctx context.Context, queue string) (time.Time, error) {
	var head time.Time
	if err := s.db.QueryRow(ctx, queueHead, queue).Scan(&head); err != nil {
		return time.Time{}, fmt.Errorf("queue head of %s: %w", queue, err)
	}
	return head, nil
}

// FairClockAdvance reserves span of a tenant's virtual time on a queue
// and returns the start tag of the reserved span.
func (s *Store) FairClockAdvance(ctx context.Context, tenantID uuid.UUID, queue string, head time.Time, span time.Duration) (time.Time, error) {
	start, err := s.q.FairClockAdvance(ctx, queries.FairClockAdvanceParams{
		TenantID: tenantID, Queue: queue, Head: head, SpanMicros: span.Microseconds(),
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("advance fair clock: %w", err)
	}
	return start, nil
}

// stepJobsInFlight counts a tenant's step jobs queued or running on a
// queue, through River's GIN index on args.
const stepJobsInFlight = `SELECT count(*) FROM river_job
WHERE kind = 'ductor.step' AND queue = $1 AND state IN ('available', 'running') AND args @> $2::jsonb`

// StepJobsInFlight counts a tenant's step jobs queued or running.
func (s *Store) StepJobsInFlight(ctx context.Context, tenantID uuid.UUID, queue string) (int, error) {
	match, _ := json.Marshal(map[string]any{"tenant_id": tenantID})
	var n int
	if err := s.db.QueryRow(ctx, stepJobsInFlight, queue, match).Scan(&n); err != nil {
		return 0, fmt.Errorf("count steps in flight: %w", err)
	}
	return n, nil
}
