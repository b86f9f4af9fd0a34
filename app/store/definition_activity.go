package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/queries"
)

// LatestRun is a definition's newest run, as the definitions list shows
// it.
type LatestRun struct {
	ID         uuid.UUID
	Status     engine.RunStatus
	CreatedAt  time.Time
	FinishedAt *time.Time
}

// RunLatestOfDefinitions returns the newest run of each of the keys, in
// one query; a definition with no run is not in the map.
func (s *Store) RunLatestOfDefinitions(ctx context.Context, tenantID uuid.UUID, keys []string) (map[string]LatestRun, error) {
	out := map[string]LatestRun{}
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := s.q.RunLatestOfDefinitions(ctx, queries.RunLatestOfDefinitionsParams{TenantID: tenantID, DefinitionKeys: keys})
	if err != nil {
		return nil, fmt.Errorf("latest runs of definitions: %w", err)
	}
	for _, r := range rows {
		out[r.DefinitionKey] = LatestRun{ID: r.ID, Status: engine.RunStatus(r.Status), CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}
	}
	return out, nil
}

// ScheduleListOfDefinition lists up to max of the schedules that start
// the definition, those its document declares and the others, by id.
func (s *Store) ScheduleListOfDefinition(ctx context.Context, tenantID uuid.UUID, key string, max int) ([]Schedule, error) {
	rows, err := s.q.ScheduleListOfDefinition(ctx, queries.ScheduleListOfDefinitionParams{TenantID: tenantID, DefinitionKey: key, Max: int32(max)})
	if err != nil {
		return nil, fmt.Errorf("list the schedules of %s: %w", key, err)
	}
	return schedulesFromRows(rows)
}
