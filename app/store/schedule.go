package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/queries"
)

// Schedule is a schedule row: what it starts, when, and what it has done.
type Schedule struct {
	TenantID       uuid.UUID
	ID             string
	Definition     string
	Version        int // 0: the newest published version
	Spec           schedule.Spec
	Input          any
	Overlap        schedule.Overlap
	CatchupWindow  time.Duration
	PauseOnFailure bool
	Paused         bool
	Note           string
	LastError      string
	// Owned schedules are declared in their definition's document.
	Owned bool
	// NextAt is the next nominal time to handle (nil: none is left);
	// DueAt is NextAt plus its jitter.
	NextAt, DueAt            *time.Time
	Actions, Skipped, Missed int64
	CreatedAt, UpdatedAt     time.Time
}

// Compiled returns the schedule's spec, checked.
func (s Schedule) Compiled() (*schedule.Schedule, error) { return schedule.New(s.Spec) }

// PlanFrom sets NextAt and DueAt to the first time after now.
func (s *Schedule) PlanFrom(sc *schedule.Schedule, now time.Time) {
	s.NextAt, s.DueAt = nil, nil
	if next := sc.Next(now); !next.IsZero() {
		due := next.Add(sc.Jitter(s.ID, next))
		s.NextAt, s.DueAt = &next, &due
	}
}

// ScheduleCreate stores a new schedule; an id already taken is a conflict.
func (s *Store) ScheduleCreate(ctx context.Context, sc Schedule) (Schedule, error) {
	spec, input, err := encodeSchedule(sc)
	if err != nil {
		return Schedule{}, err
	}
	row, err := s.q.ScheduleInsert(ctx, queries.ScheduleInsertParams{
		TenantID: sc.TenantID, ID: sc.ID, DefinitionKey: sc.Definition, DefinitionVersion: int32(sc.Version),
		Spec: spec, Input: input, Overlap: string(sc.Overlap), CatchupWindowMs: sc.CatchupWindow.Milliseconds(),
		PauseOnFailure: sc.PauseOnFailure, Paused: sc.Paused, Note: sc.Note, Owned: sc.Owned,
		NextAt: sc.NextAt, DueAt: sc.DueAt,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Schedule{}, apperr.New(apperr.Conflict, "schedule %q already exists", sc.ID)
	}
	if err != nil {
		return Schedule{}, fmt.Errorf("store schedule: %w", err)
	}
	return scheduleFromRow(row)
}

// ScheduleSave stores a changed schedule's settings and plan.
func (s *Store) ScheduleSave(ctx context.Context, sc Schedule) (Schedule, error) {
	spec, input, err := encodeSchedule(sc)
	if err != nil {
		return Schedule{}, err
	}
	row, err := s.q.ScheduleUpdate(ctx, queries.ScheduleUpdateParams{
		TenantID: sc.TenantID, ID: sc.ID, DefinitionVersion: int32(sc.Version), Spec: spec, Input: input,
		Overlap: string(sc.Overlap), CatchupWindowMs: sc.CatchupWindow.Milliseconds(), PauseOnFailure: sc.PauseOnFailure,
		Paused: sc.Paused, Note: sc.Note, NextAt: sc.NextAt, DueAt: sc.DueAt,
	})
	if err != nil {
		return Schedule{}, notFound(err, "schedule "+sc.ID)
	}
	return scheduleFromRow(row)
}

func encodeSchedule(sc Schedule) (spec, input []byte, err error) {
	if spec, err = json.Marshal(sc.Spec); err != nil {
		return nil, nil, fmt.Errorf("encode schedule spec: %w", err)
	}
	if input, err = jsonvalue.Marshal(sc.Input); err != nil {
		return nil, nil, fmt.Errorf("encode schedule input: %w", err)
	}
	return spec, input, nil
}

// ScheduleGet returns a tenant's schedule.
func (s *Store) ScheduleGet(ctx context.Context, tenantID uuid.UUID, id string) (Schedule, error) {
	row, err := s.q.ScheduleGet(ctx, queries.ScheduleGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Schedule{}, notFound(err, "schedule "+id)
	}
	return scheduleFromRow(row)
}

// ScheduleLock returns a tenant's schedule locked until the transaction
// ends, waiting for whoever holds it.
func (s *Store) ScheduleLock(ctx context.Context, tenantID uuid.UUID, id string) (Schedule, error) {
	row, err := s.q.ScheduleLock(ctx, queries.ScheduleLockParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Schedule{}, notFound(err, "schedule "+id)
	}
	return scheduleFromRow(row)
}

// ScheduleTryLock locks a schedule unless another transaction holds it:
// ok is false then, or when it is gone.
func (s *Store) ScheduleTryLock(ctx context.Context, tenantID uuid.UUID, id string) (Schedule, bool, error) {
	row, err := s.q.ScheduleTryLock(ctx, queries.ScheduleTryLockParams{TenantID: tenantID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Schedule{}, false, nil
	}
	if err != nil {
		return Schedule{}, false, fmt.Errorf("lock schedule %s: %w", id, err)
	}
	sc, err := scheduleFromRow(row)
	return sc, err == nil, err
}

// ScheduleList lists a tenant's schedules by id, after the given one.
func (s *Store) ScheduleList(ctx context.Context, tenantID uuid.UUID, after string, limit int) ([]Schedule, error) {
	rows, err := s.q.ScheduleList(ctx, queries.ScheduleListParams{TenantID: tenantID, After: after, Max: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return schedulesFromRows(rows)
}

// ScheduleDelete deletes a schedule and its actions (not the runs it started).
func (s *Store) ScheduleDelete(ctx context.Context, tenantID uuid.UUID, id string) error {
	n, err := s.q.ScheduleDelete(ctx, queries.ScheduleDeleteParams{TenantID: tenantID, ID: id})
	if err != nil {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "schedule %s not found", id)
	}
	return nil
}

// SchedulesClaimDue locks up to max schedules whose next action is due by
// the database's clock, skipping those another replica holds.
func (s *Store) SchedulesClaimDue(ctx context.Context, max int) ([]Schedule, error) {
	rows, err := s.q.SchedulesClaimDue(ctx, int32(max))
	if err != nil {
		return nil, fmt.Errorf("claim due schedules: %w", err)
	}
	return schedulesFromRows(rows)
}

// Advance is what a pass over a schedule did.
type Advance struct {
	NextAt, DueAt            *time.Time
	Actions, Skipped, Missed int64
	LastError                string
}

// ScheduleAdvance records a pass: the next time to handle and the counts.
func (s *Store) ScheduleAdvance(ctx context.Context, tenantID uuid.UUID, id string, a Advance) error {
	err := s.q.ScheduleAdvance(ctx, queries.ScheduleAdvanceParams{
		TenantID: tenantID, ID: id, NextAt: a.NextAt, DueAt: a.DueAt,
		Actions: a.Actions, Skipped: a.Skipped, Missed: a.Missed, LastError: a.LastError,
	})
	if err != nil {
		return fmt.Errorf("advance schedule %s: %w", id, err)
	}
	return nil
}

// SchedulePause pauses a schedule with a note saying why.
func (s *Store) SchedulePause(ctx context.Context, tenantID uuid.UUID, id, note string) error {
	if err := s.q.SchedulePause(ctx, queries.SchedulePauseParams{TenantID: tenantID, ID: id, Note: note}); err != nil {
		return fmt.Errorf("pause schedule %s: %w", id, err)
	}
	return nil
}

// Now is the database's clock as Ductor reads it (ductor_now()).
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	now, err := s.q.ScheduleClockNow(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the database clock: %w", err)
	}
	return now, nil
}

func schedulesFromRows(rows []queries.Schedule) ([]Schedule, error) {
	out := make([]Schedule, 0, len(rows))
	for _, r := range rows {
		sc, err := scheduleFromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func scheduleFromRow(r queries.Schedule) (Schedule, error) {
	sc := Schedule{
		TenantID: r.TenantID, ID: r.ID, Definition: r.DefinitionKey, Version: int(r.DefinitionVersion),
		Overlap: schedule.Overlap(r.Overlap), CatchupWindow: time.Duration(r.CatchupWindowMs) * time.Millisecond,
		PauseOnFailure: r.PauseOnFailure, Paused: r.Paused, Note: r.Note, LastError: r.LastError, Owned: r.Owned,
		NextAt: r.NextAt, DueAt: r.DueAt, Actions: r.Actions, Skipped: r.Skipped, Missed: r.Missed,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if err := json.Unmarshal(r.Spec, &sc.Spec); err != nil {
		return Schedule{}, fmt.Errorf("decode spec of schedule %s: %w", r.ID, err)
	}
	if err := decodeJSON(r.Input, &sc.Input); err != nil {
		return Schedule{}, fmt.Errorf("decode input of schedule %s: %w", r.ID, err)
	}
	return sc, nil
}
