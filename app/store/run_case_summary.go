package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// CaseSummary is a case as lists show it: its data only when asked for
// and small enough (DataLeftOut tells it was asked for but is larger).
type CaseSummary struct {
	Case
	DataLeftOut bool
}

// CaseSummaryFilter narrows CaseSummaries; WithData asks for each case's
// data up to MaxDataBytes of JSON text.
type CaseSummaryFilter struct {
	Status       string
	Limit        int
	WithData     bool
	MaxDataBytes int
}

// CaseSummaries returns the tenant's cases matching f, newest first,
// without reading the data of a case that is not to be shown.
func (s *Store) CaseSummaries(ctx context.Context, tenantID uuid.UUID, f CaseSummaryFilter) ([]CaseSummary, error) {
	rows, err := s.q.RunCaseSummaryList(ctx, queries.RunCaseSummaryListParams{
		TenantID: tenantID, Status: f.Status, MaxRows: int32(limitOr(f.Limit)),
		WithData: f.WithData, MaxDataBytes: int32(f.MaxDataBytes),
	})
	if err != nil {
		return nil, fmt.Errorf("list cases: %w", err)
	}
	out := make([]CaseSummary, len(rows))
	for i, r := range rows {
		c := Case{
			TenantID: r.TenantID, ID: r.ID, RunID: r.RunID, Node: r.Node, Title: r.Title, Assignees: r.Assignees,
			AwaitingStatus: r.AwaitingStatus, Status: r.Status, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy, ClosedAt: r.ClosedAt,
		}
		if err := decodeJSON(r.Fields, &c.Fields); err != nil {
			return nil, fmt.Errorf("decode case %s fields: %w", r.ID, err)
		}
		if err := decodeJSON(r.Data, &c.Data); err != nil {
			return nil, fmt.Errorf("decode case %s data: %w", r.ID, err)
		}
		out[i] = CaseSummary{Case: c, DataLeftOut: r.DataLeftOut}
	}
	return out, nil
}
