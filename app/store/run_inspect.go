package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/queries"
)

// ChildFilter chooses a page of a scatter's children.
type ChildFilter struct {
	Scatter string
	// After is the child index the page starts after (-1: the first); a
	// cursor past the last child is an empty page.
	After int64
	// State keeps children in this state ("": any); Key those whose key
	// contains it, ignoring case ("": any).
	State, Key string
	Limit      int
}

// RunNodesChildrenFiltered loads one page of a scatter's children, in
// item order, in f's state and with f's key.
func (s *Store) RunNodesChildrenFiltered(ctx context.Context, tenantID, runID uuid.UUID, f ChildFilter) ([]*engine.Node, error) {
	p := queries.RunNodeListChildrenFilteredParams{
		TenantID: tenantID, RunID: runID, Scatter: pgtype.Text{String: f.Scatter, Valid: true},
		AfterIndex: f.After, State: nullText(f.State), MaxRows: int32(f.Limit),
	}
	if f.Key != "" {
		p.KeyLike = pgtype.Text{String: likeEscape(f.Scatter) + "[%" + likeEscape(f.Key) + "%]", Valid: true}
	}
	rows, err := s.planned().RunNodeListChildrenFiltered(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("load children of %s: %w", f.Scatter, err)
	}
	return nodesFromRows(rows)
}

// likeEscape quotes LIKE's wildcards in s.
func likeEscape(s string) string {
	out := likePrefix(s)
	return out[:len(out)-1]
}

// RunNodeHistory returns one node's transitions after seq, oldest first.
func (s *Store) RunNodeHistory(ctx context.Context, tenantID, runID uuid.UUID, node string, afterSeq int64, limit int) ([]engine.Transition, error) {
	rows, err := s.q.RunHistoryListByNode(ctx, queries.RunHistoryListByNodeParams{
		TenantID: tenantID, RunID: runID, Node: node, AfterSeq: afterSeq, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, fmt.Errorf("load history of %s: %w", node, err)
	}
	out := make([]engine.Transition, len(rows))
	for i, r := range rows {
		out[i] = engine.Transition{
			Seq: r.Seq, At: r.At, Node: r.Node, From: r.FromState, To: r.ToState,
			Generation: int(r.Generation), Attempt: int(r.Attempt), Detail: r.Detail,
		}
	}
	return out, nil
}

// LiveState is what a run's live view watches.
type LiveState struct {
	Status          engine.RunStatus
	TransitionCount int64
	RecordVersion   int64
	// Pending says a tick or an input is still to come.
	Pending bool
}

// RunLiveState reads a run's status, transition count and whether work
// for it is still to come.
func (s *Store) RunLiveState(ctx context.Context, tenantID, runID uuid.UUID) (LiveState, error) {
	r, err := s.q.RunLiveState(ctx, queries.RunLiveStateParams{TenantID: tenantID, ID: runID})
	if err != nil {
		return LiveState{}, notFound(err, "run")
	}
	return LiveState{Status: engine.RunStatus(r.Status), TransitionCount: r.TransitionCount, RecordVersion: r.RecordVersion, Pending: r.Pending}, nil
}
