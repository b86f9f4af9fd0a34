package store

import (
	"context"
	"fmt"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// AttemptCancel gives a cancelled attempt its result (e) unless it has
// one: no worker takes it from then on, and a worker already running it
// holds no lease that could report it lost.
func (s *Store) AttemptCancel(ctx context.Context, k AttemptKey, e *engine.Error) error {
	raw, err := jsonvalue.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode cancellation: %w", err)
	}
	err = s.q.RunAttemptCancel(ctx, queries.RunAttemptCancelParams{
		TenantID: k.Run.TenantID, RunID: k.Run.ID, Node: k.Node,
		Generation: int32(k.Generation), Attempt: int32(k.Attempt), Error: raw,
	})
	if err != nil {
		return fmt.Errorf("cancel attempt: %w", err)
	}
	return nil
}

// AttemptsFinishedAmong returns those of keys whose attempt has a result.
func (s *Store) AttemptsFinishedAmong(ctx context.Context, keys []AttemptKey) ([]AttemptKey, error) {
	var c attemptColumns
	for _, k := range keys {
		c.add(k)
	}
	rows, err := s.q.RunAttemptFinishedAmong(ctx, queries.RunAttemptFinishedAmongParams{
		TenantIds: c.tenants, RunIds: c.runs, Nodes: c.nodes, Generations: c.generations, Attempts: c.attempts,
	})
	if err != nil {
		return nil, fmt.Errorf("find finished attempts: %w", err)
	}
	out := make([]AttemptKey, len(rows))
	for i, r := range rows {
		out[i] = AttemptKey{RunKey{r.TenantID, r.RunID}, r.Node, int(r.Generation), int(r.Attempt)}
	}
	return out, nil
}
