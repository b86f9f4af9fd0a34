package store

import (
	"context"
	"fmt"

	"github.com/ductor/ductor/queries"
)

// AttemptDropLease takes the leases of started attempts away, so that no
// sweep ever reports them lost: a fault for the checker to find
// (shell.Testing.UnleasedLocalSteps), never done in production.
func (s *Store) AttemptDropLease(ctx context.Context, keys []AttemptKey) error {
	for _, k := range keys {
		if err := s.q.RunAttemptDropLease(ctx, queries.RunAttemptDropLeaseParams{TenantID: k.Run.TenantID, RunID: k.Run.ID,
			Node: k.Node, Generation: int32(k.Generation), Attempt: int32(k.Attempt)}); err != nil {
			return fmt.Errorf("drop lease: %w", err)
		}
	}
	return nil
}
