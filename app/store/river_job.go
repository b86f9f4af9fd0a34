package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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

// fairClockAdvance reserves span microseconds of a tenant's virtual time
// on a queue, in one statement: the batch starts at the later of the
// tenant's last finish tag and the queue's head (the start tag of the next
// job River will fetch: its earliest available job, or a day ago when the
// queue is empty; virtual time advances far slower than real time, so tags
// stay in the past). River's tables are not in sqlc's schema, so this query
// is written by hand.
const fairClockAdvance = `WITH head AS (
    SELECT coalesce(min(scheduled_at), now() - interval '24 hours') AS h
    FROM river_job WHERE state = 'available' AND queue = $2 AND priority = 1)
INSERT INTO fair_clock (tenant_id, queue, finish_tag)
SELECT $1, $2, h + $3 * interval '1 microsecond' FROM head
ON CONFLICT (tenant_id, queue) DO UPDATE
SET finish_tag = greatest(fair_clock.finish_tag, (SELECT h FROM head)) + $3 * interval '1 microsecond'
RETURNING finish_tag - $3 * interval '1 microsecond'`

// FairClockAdvance reserves span of a tenant's virtual time on a queue and
// returns the start tag of the reserved span.
func (s *Store) FairClockAdvance(ctx context.Context, tenantID uuid.UUID, queue string, span time.Duration) (time.Time, error) {
	var start time.Time
	if err := s.db.QueryRow(ctx, fairClockAdvance, tenantID, queue, span.Microseconds()).Scan(&start); err != nil {
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
