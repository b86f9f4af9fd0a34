package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// TreeCase is a case with the root of its run's tree.
type TreeCase struct {
	Case
	Root uuid.UUID
}

// CasesOfTrees lists, oldest first, the cases of every run whose root is
// one of rootIDs: the roots, their child runs at any depth and their
// continuations.
func (s *Store) CasesOfTrees(ctx context.Context, tenantID uuid.UUID, rootIDs []uuid.UUID) ([]TreeCase, error) {
	if len(rootIDs) == 0 {
		return []TreeCase{}, nil
	}
	rows, err := s.q.RunCaseListByRoots(ctx, queries.RunCaseListByRootsParams{TenantID: tenantID, RootIds: rootIDs})
	if err != nil {
		return nil, fmt.Errorf("list cases of run trees: %w", err)
	}
	out := make([]TreeCase, len(rows))
	for i, r := range rows {
		c, err := caseFromRow(r.RunCase)
		if err != nil {
			return nil, err
		}
		out[i] = TreeCase{Case: c, Root: r.RootRunID}
	}
	return out, nil
}
