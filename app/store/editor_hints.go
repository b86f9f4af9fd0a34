package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// maxHints bounds each list of editor hints.
const maxHints = 500

// HandlersSeen lists the task handlers the tenant's database knows of,
// by name: those of bridge-SDK tasks waiting for or held by a worker, and
// those the newest published version of each definition names (on a
// task step, or in a scatter's task template).
func (s *Store) HandlersSeen(ctx context.Context, tenantID uuid.UUID) ([]string, error) {
	out, err := s.q.HandlersSeen(ctx, queries.HandlersSeenParams{TenantID: tenantID, MaxRows: maxHints})
	if err != nil {
		return nil, fmt.Errorf("handlers seen: %w", err)
	}
	return out, nil
}

// DefinitionVersions is a definition's key and name with its published
// versions, newest first.
type DefinitionVersions struct {
	Key      string `json:"key"`
	Name     string `json:"name,omitempty"`
	Versions []int  `json:"versions"`
}

// DefinitionVersionsList lists the tenant's definitions by key, each
// with its published versions.
func (s *Store) DefinitionVersionsList(ctx context.Context, tenantID uuid.UUID) ([]DefinitionVersions, error) {
	rows, err := s.q.DefinitionVersionsList(ctx, queries.DefinitionVersionsListParams{TenantID: tenantID, MaxRows: maxHints})
	if err != nil {
		return nil, fmt.Errorf("definitions and versions: %w", err)
	}
	out := make([]DefinitionVersions, len(rows))
	for i, r := range rows {
		out[i] = DefinitionVersions{Key: r.Key, Name: r.Name, Versions: make([]int, len(r.Versions))}
		for j, v := range r.Versions {
			out[i].Versions[j] = int(v)
		}
	}
	return out, nil
}
