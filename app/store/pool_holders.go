package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// PoolHolder is an attempt that holds a slot of a concurrency pool's key:
// admitted and not finished.
type PoolHolder struct {
	RunID uuid.UUID
	Node  string
}

// PoolHolders lists up to limit attempts that hold slots of a tenant's
// concurrency pool key, for the inspector to link a held step to what it
// waits behind.
func (s *Store) PoolHolders(ctx context.Context, tenantID uuid.UUID, key string, limit int) ([]PoolHolder, error) {
	rows, err := s.db.Query(ctx, poolHolders, tenantID.String(), key, limit)
	if err != nil {
		return nil, fmt.Errorf("pool's holders: %w", err)
	}
	defer rows.Close()
	var out []PoolHolder
	for rows.Next() {
		var h PoolHolder
		if err := rows.Scan(&h.RunID, &h.Node); err != nil {
			return nil, fmt.Errorf("pool's holders: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pool's holders: %w", err)
	}
	return out, nil
}
