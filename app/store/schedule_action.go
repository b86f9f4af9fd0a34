package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/queries"
)

// States of a schedule action.
const (
	ActionBuffered = "buffered"
	ActionRunning  = "running"
	ActionDone     = "done"
)

// ScheduleAction is one action of a schedule: its scheduled time, where it
// came from (schedule, trigger, backfill), and the run it started.
type ScheduleAction struct {
	ScheduledAt time.Time  `json:"scheduled_at"`
	State       string     `json:"state"`
	Source      string     `json:"source"`
	RunID       *uuid.UUID `json:"run_id"`
	// Status is the run's status ("" while buffered; not_started when the
	// run could not be started, Error saying why).
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// ScheduleActionAdd records an action at a scheduled time in state; a
// time already acted on records nothing and reports false.
func (s *Store) ScheduleActionAdd(ctx context.Context, tenantID uuid.UUID, id string, at time.Time, state, source string) (bool, error) {
	_, err := s.q.ScheduleActionInsert(ctx, queries.ScheduleActionInsertParams{
		TenantID: tenantID, ScheduleID: id, ScheduledAt: at, State: state, Source: source,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record action of %s at %s: %w", id, at, err)
	}
	return true, nil
}

// ScheduleActionStarted records the run an action started.
func (s *Store) ScheduleActionStarted(ctx context.Context, tenantID uuid.UUID, id string, at time.Time, runID uuid.UUID) error {
	err := s.q.ScheduleActionStarted(ctx, queries.ScheduleActionStartedParams{TenantID: tenantID, ScheduleID: id, ScheduledAt: at, RunID: uuid.NullUUID{UUID: runID, Valid: true}})
	if err != nil {
		return fmt.Errorf("record run of %s at %s: %w", id, at, err)
	}
	return nil
}

// ScheduleActionDone records how an action ended.
func (s *Store) ScheduleActionDone(ctx context.Context, tenantID uuid.UUID, id string, at time.Time, status string) error {
	err := s.q.ScheduleActionDone(ctx, queries.ScheduleActionDoneParams{TenantID: tenantID, ScheduleID: id, ScheduledAt: at, RunStatus: status})
	if err != nil {
		return fmt.Errorf("end action of %s at %s: %w", id, at, err)
	}
	return nil
}

// ScheduleActionNotStarted records an action that could not start its
// run, and why.
func (s *Store) ScheduleActionNotStarted(ctx context.Context, tenantID uuid.UUID, id string, at time.Time, why string) error {
	err := s.q.ScheduleActionNotStarted(ctx, queries.ScheduleActionNotStartedParams{TenantID: tenantID, ScheduleID: id, ScheduledAt: at, Error: why})
	if err != nil {
		return fmt.Errorf("end action of %s at %s: %w", id, at, err)
	}
	return nil
}

// ScheduleActionsOpen lists a schedule's buffered and running actions,
// oldest first, each with its run's current status.
func (s *Store) ScheduleActionsOpen(ctx context.Context, tenantID uuid.UUID, id string) ([]ScheduleAction, error) {
	rows, err := s.q.ScheduleActionsOpen(ctx, queries.ScheduleActionsOpenParams{TenantID: tenantID, ScheduleID: id})
	if err != nil {
		return nil, fmt.Errorf("open actions of %s: %w", id, err)
	}
	out := make([]ScheduleAction, len(rows))
	for i, r := range rows {
		out[i] = ScheduleAction{ScheduledAt: r.ScheduledAt, State: r.State, Source: r.Source, RunID: uuidPtr(r.RunID), Status: r.Status}
	}
	return out, nil
}

// ScheduleActionsRecent lists a schedule's newest actions.
func (s *Store) ScheduleActionsRecent(ctx context.Context, tenantID uuid.UUID, id string, limit int) ([]ScheduleAction, error) {
	rows, err := s.q.ScheduleActionsRecent(ctx, queries.ScheduleActionsRecentParams{TenantID: tenantID, ScheduleID: id, Max: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("recent actions of %s: %w", id, err)
	}
	out := make([]ScheduleAction, len(rows))
	for i, r := range rows {
		out[i] = ScheduleAction{ScheduledAt: r.ScheduledAt, State: r.State, Source: r.Source, RunID: uuidPtr(r.RunID), Status: r.Status, Error: r.Error}
	}
	return out, nil
}

// ScheduleKey names a schedule.
type ScheduleKey struct {
	TenantID uuid.UUID
	ID       string
}

// SchedulesToSettle lists schedules with a running action whose run has
// ended.
func (s *Store) SchedulesToSettle(ctx context.Context, max int) ([]ScheduleKey, error) {
	rows, err := s.q.ScheduleActionsToSettle(ctx, int32(max))
	if err != nil {
		return nil, fmt.Errorf("find schedules to settle: %w", err)
	}
	out := make([]ScheduleKey, len(rows))
	for i, r := range rows {
		out[i] = ScheduleKey{TenantID: r.TenantID, ID: r.ScheduleID}
	}
	return out, nil
}

// ScheduleActionsPrune forgets a schedule's ended actions beyond the
// newest keep.
func (s *Store) ScheduleActionsPrune(ctx context.Context, tenantID uuid.UUID, id string, keep int) error {
	if err := s.q.ScheduleActionsPrune(ctx, queries.ScheduleActionsPruneParams{TenantID: tenantID, ScheduleID: id, Keep: int32(keep)}); err != nil {
		return fmt.Errorf("prune actions of %s: %w", id, err)
	}
	return nil
}
