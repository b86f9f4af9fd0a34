package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// RunNodesSteps loads a run's manifest-step nodes (no scatter children).
func (s *Store) RunNodesSteps(ctx context.Context, tenantID, runID uuid.UUID) ([]*engine.Node, error) {
	rows, err := s.q.RunNodeListSteps(ctx, queries.RunNodeListStepsParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("load nodes: %w", err)
	}
	return nodesFromRows(rows)
}

// RunNodesByName loads the named nodes of a run.
func (s *Store) RunNodesByName(ctx context.Context, tenantID, runID uuid.UUID, names []string) ([]*engine.Node, error) {
	rows, err := s.q.RunNodeListByName(ctx, queries.RunNodeListByNameParams{TenantID: tenantID, RunID: runID, Nodes: names})
	if err != nil {
		return nil, fmt.Errorf("load nodes: %w", err)
	}
	return nodesFromRows(rows)
}

// RunNodesChildren loads the children of a scatter with index in [from, to),
// only the non-terminal ones when live is set.
func (s *Store) RunNodesChildren(ctx context.Context, tenantID, runID uuid.UUID, need engine.Need) ([]*engine.Node, error) {
	rows, err := s.q.RunNodeListChildren(ctx, queries.RunNodeListChildrenParams{
		TenantID: tenantID, RunID: runID, Scatter: pgtype.Text{String: need.Scatter, Valid: true},
		FromIndex: pgtype.Int4{Int32: int32(need.From), Valid: true},
		ToIndex:   pgtype.Int4{Int32: int32(need.To), Valid: true}, LiveOnly: need.Live,
	})
	if err != nil {
		return nil, fmt.Errorf("load children of %s: %w", need.Scatter, err)
	}
	return nodesFromRows(rows)
}

func nodesFromRows(rows []queries.RunNode) ([]*engine.Node, error) {
	out := make([]*engine.Node, len(rows))
	for i, r := range rows {
		var n engine.Node
		if err := jsonvalue.Unmarshal(r.Data, &n); err != nil {
			return nil, fmt.Errorf("decode node %s: %w", r.Node, err)
		}
		out[i] = &n
	}
	return out, nil
}

// RunChildNodeCounts counts a scatter's children by state.
func (s *Store) RunChildNodeCounts(ctx context.Context, tenantID, runID uuid.UUID, scatter string) (map[string]int64, error) {
	rows, err := s.q.RunNodeCountChildrenByState(ctx, queries.RunNodeCountChildrenByStateParams{
		TenantID: tenantID, RunID: runID, Scatter: pgtype.Text{String: scatter, Valid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("count children of %s: %w", scatter, err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.State] = r.Nodes
	}
	return out, nil
}
