package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// StepWorkerSeen records that a process works the step queues, by the
// database's clock, and forgets processes not seen for forget.
func (s *Store) StepWorkerSeen(ctx context.Context, processID uuid.UUID, queues []string, forget time.Duration) error {
	if err := s.q.StepWorkerSeen(ctx, queries.StepWorkerSeenParams{ProcessID: processID, Queues: queues}); err != nil {
		return fmt.Errorf("record step worker: %w", err)
	}
	if err := s.q.StepWorkerForget(ctx, forget.Seconds()); err != nil {
		return fmt.Errorf("forget step workers: %w", err)
	}
	return nil
}

// StepWorkerGone removes a process that stops working the step queues.
func (s *Store) StepWorkerGone(ctx context.Context, processID uuid.UUID) error {
	if err := s.q.StepWorkerGone(ctx, processID); err != nil {
		return fmt.Errorf("remove step worker: %w", err)
	}
	return nil
}

// StepQueuesUnserved returns the queues among queues that no process was
// seen working within alive.
func (s *Store) StepQueuesUnserved(ctx context.Context, queues []string, alive time.Duration) ([]string, error) {
	out, err := s.q.StepQueuesUnserved(ctx, queries.StepQueuesUnservedParams{Queues: queues, Alive: alive.Seconds()})
	if err != nil {
		return nil, fmt.Errorf("find unserved step queues: %w", err)
	}
	return out, nil
}
