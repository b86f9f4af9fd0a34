package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// AttemptOutput returns one attempt's output (nil when it has none); an
// unknown attempt is NotFound.
func (s *Store) AttemptOutput(ctx context.Context, tenantID, runID uuid.UUID, node string, generation, attempt int) (any, error) {
	raw, err := s.q.RunAttemptOutput(ctx, queries.RunAttemptOutputParams{
		TenantID: tenantID, RunID: runID, Node: node, Generation: int32(generation), Attempt: int32(attempt),
	})
	if err != nil {
		return nil, notFound(err, "attempt")
	}
	var out any
	if err := decodeJSON(raw, &out); err != nil {
		return nil, fmt.Errorf("decode attempt output: %w", err)
	}
	return out, nil
}

// SignalPayload returns the payload of a signal the run holds, by its
// request id; an unknown one is NotFound.
func (s *Store) SignalPayload(ctx context.Context, tenantID, runID uuid.UUID, requestID string) (any, error) {
	raw, err := s.q.RunSignalPayload(ctx, queries.RunSignalPayloadParams{TenantID: tenantID, RunID: runID, RequestID: requestID})
	if err != nil {
		return nil, notFound(err, "signal")
	}
	var out any
	if err := decodeJSON(raw, &out); err != nil {
		return nil, fmt.Errorf("decode signal payload: %w", err)
	}
	return out, nil
}
