package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// WebhookPath is where a webhook's deliveries are posted: its tenant's
// slug and its id.
type WebhookPath struct {
	Slug     string
	TenantID uuid.UUID
	ID       string
}

// WebhookPathList lists every tenant's webhook paths, at most max of
// them: the receiver's record of which webhooks exist.
func (s *Store) WebhookPathList(ctx context.Context, max int) ([]WebhookPath, error) {
	rows, err := s.q.WebhookPathList(ctx, int32(max))
	if err != nil {
		return nil, fmt.Errorf("list webhook paths: %w", err)
	}
	out := make([]WebhookPath, len(rows))
	for i, r := range rows {
		out[i] = WebhookPath{Slug: r.Slug, TenantID: r.TenantID, ID: r.ID}
	}
	return out, nil
}
