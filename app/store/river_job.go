package store

import (
	"context"
	"encoding/json"
	"fmt"

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
