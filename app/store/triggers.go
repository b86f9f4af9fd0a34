package store

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/queries"
)

// NoteUnpublished is the note of a definition's schedules paused because
// no version of it is published; publishing one again unpauses them.
const NoteUnpublished = "paused: the definition has no published version"

// NotePausedInDocument is the note of a schedule its document declares paused.
const NotePausedInDocument = "paused in the definition"

// triggersSync makes a definition's event triggers and owned schedules
// those of manifest, the newest published version (nil: none is left,
// and its schedules pause). It runs in the transaction that publishes or
// unpublishes.
func (s *Store) triggersSync(ctx context.Context, tenantID uuid.UUID, key string, m *definition.Manifest) error {
	if err := s.eventTriggersSet(ctx, tenantID, key, m); err != nil {
		return err
	}
	if m == nil {
		if err := s.q.ScheduleOwnedPause(ctx, queries.ScheduleOwnedPauseParams{TenantID: tenantID, DefinitionKey: key, Note: NoteUnpublished}); err != nil {
			return fmt.Errorf("pause the schedules of %s: %w", key, err)
		}
		return nil
	}
	return s.ownedSchedulesSet(ctx, tenantID, key, m)
}

func (s *Store) eventTriggersSet(ctx context.Context, tenantID uuid.UUID, key string, m *definition.Manifest) error {
	if err := s.q.EventTriggerDeleteDefinition(ctx, queries.EventTriggerDeleteDefinitionParams{TenantID: tenantID, DefinitionKey: key}); err != nil {
		return fmt.Errorf("clear the event triggers of %s: %w", key, err)
	}
	if m == nil {
		return nil
	}
	for i, t := range m.Triggers {
		if t.Event == nil {
			continue
		}
		err := s.q.EventTriggerInsert(ctx, queries.EventTriggerInsertParams{
			TenantID: tenantID, Name: t.Event.Name, DefinitionKey: key, Position: int32(i),
			FilterExpr: t.Event.FilterExpr, InputExpr: t.Event.InputExpr,
		})
		if err != nil {
			return fmt.Errorf("store the event triggers of %s: %w", key, err)
		}
	}
	return nil
}

// ownedSchedulesSet creates, updates and deletes the definition's owned
// schedules to match its document.
func (s *Store) ownedSchedulesSet(ctx context.Context, tenantID uuid.UUID, key string, m *definition.Manifest) error {
	rows, err := s.q.ScheduleOwnedList(ctx, queries.ScheduleOwnedListParams{TenantID: tenantID, DefinitionKey: key})
	if err != nil {
		return fmt.Errorf("list the schedules of %s: %w", key, err)
	}
	owned, err := schedulesFromRows(rows)
	if err != nil {
		return err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return err
	}
	declared := map[string]bool{}
	for _, t := range m.Triggers {
		if t.Schedule == nil {
			continue
		}
		declared[t.Schedule.ID] = true
		if err := s.ownedScheduleSet(ctx, tenantID, key, t.Schedule, owned, now); err != nil {
			return err
		}
	}
	for _, sc := range owned {
		if !declared[sc.ID] {
			if err := s.ScheduleDelete(ctx, tenantID, sc.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) ownedScheduleSet(ctx context.Context, tenantID uuid.UUID, key string, t *definition.ScheduleTrigger, owned []Schedule, now time.Time) error {
	want := Schedule{
		TenantID: tenantID, ID: t.ID, Definition: key, Spec: t.Spec, Input: t.Input, Overlap: t.Overlap,
		CatchupWindow: t.CatchupWindow.D(), PauseOnFailure: t.PauseOnFailure, Paused: t.Paused, Owned: true,
	}
	if t.Paused {
		want.Note = NotePausedInDocument
	}
	sc, err := schedule.New(t.Spec)
	if err != nil {
		return fmt.Errorf("schedule %s: %w", t.ID, err)
	}
	for _, have := range owned {
		if have.ID == t.ID {
			return s.ownedScheduleUpdate(ctx, have, want, sc, now)
		}
	}
	want.PlanFrom(sc, now)
	if _, err := s.ScheduleCreate(ctx, want); apperr.Is(err, apperr.Conflict) {
		return apperr.New(apperr.Conflict, "schedule id %q is taken by a schedule the definition does not own: choose another id in triggers", t.ID)
	} else if err != nil {
		return err
	}
	return nil
}

// ownedScheduleUpdate applies the document to an owned schedule: its
// settings always; its pause only when the document pauses it or when it
// was paused because the definition had no published version.
func (s *Store) ownedScheduleUpdate(ctx context.Context, have, want Schedule, sc *schedule.Schedule, now time.Time) error {
	if !want.Paused && have.Note != NoteUnpublished && have.Note != NotePausedInDocument {
		want.Paused, want.Note = have.Paused, have.Note
	}
	want.NextAt, want.DueAt = have.NextAt, have.DueAt
	if !reflect.DeepEqual(have.Spec, want.Spec) || (have.Paused && !want.Paused) {
		want.PlanFrom(sc, now)
	}
	_, err := s.ScheduleSave(ctx, want)
	return err
}

// triggersResync syncs a definition's triggers with its newest version
// still published, after an unpublish.
func (s *Store) triggersResync(ctx context.Context, tenantID uuid.UUID, key string) error {
	ref, err := s.DefinitionVersionRef(ctx, tenantID, key, 0)
	if apperr.Is(err, apperr.NotFound) {
		return s.triggersSync(ctx, tenantID, key, nil)
	}
	if err != nil {
		return err
	}
	v, err := s.DefinitionVersionGet(ctx, tenantID, key, ref.Version)
	if err != nil {
		return err
	}
	return s.triggersSync(ctx, tenantID, key, v.Manifest)
}
