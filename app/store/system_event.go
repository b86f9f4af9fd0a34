package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// SystemEventAdd stores a system event in the caller's transaction and
// queues it for dispatch (system_event_outbox). An id already stored
// stores nothing and reports false.
func (s *Store) SystemEventAdd(ctx context.Context, tenantID, id uuid.UUID, name string, data any) (bool, error) {
	b, err := jsonvalue.Marshal(data)
	if err != nil {
		return false, fmt.Errorf("encode system event data: %w", err)
	}
	n, err := s.q.SystemEventInsert(ctx, queries.SystemEventInsertParams{TenantID: tenantID, ID: id, Name: name, Data: b})
	if err != nil {
		return false, fmt.Errorf("store system event: %w", err)
	}
	return n > 0, nil
}

// EventKey names one tenant's event.
type EventKey struct{ TenantID, ID uuid.UUID }

// SystemEventsDue lists up to max undispatched system events, oldest
// first, skipping those another transaction holds.
func (s *Store) SystemEventsDue(ctx context.Context, max int) ([]EventKey, error) {
	rows, err := s.q.SystemEventOutboxDue(ctx, int32(max))
	if err != nil {
		return nil, err
	}
	out := make([]EventKey, len(rows))
	for i, r := range rows {
		out[i] = EventKey{TenantID: r.TenantID, ID: r.EventID}
	}
	return out, nil
}

// SystemEventTake takes one system event for dispatch in the caller's
// transaction; ok is false when it was dispatched already (or pruned,
// which takes its outbox row with it). An event row is never changed
// once stored, so the caller dispatches what SystemEventPeek read.
func (s *Store) SystemEventTake(ctx context.Context, tenantID, id uuid.UUID) (ok bool, err error) {
	n, err := s.q.SystemEventOutboxTake(ctx, queries.SystemEventOutboxTakeParams{TenantID: tenantID, EventID: id})
	return n == 1, err
}

// SystemEventPeek reads a queued system event without taking it.
func (s *Store) SystemEventPeek(ctx context.Context, tenantID, id uuid.UUID) (Event, error) {
	row, err := s.q.SystemEventGet(ctx, queries.SystemEventGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Event{}, notFound(err, "event")
	}
	return eventFromRow(row)
}

// SystemEvent is one system event to store.
type SystemEvent struct {
	TenantID, ID uuid.UUID
	Name         string
	Data         any
}

// SystemEventsAdd stores events in the caller's transaction, in one
// statement, and queues them for dispatch; ids already stored store
// nothing.
func (s *Store) SystemEventsAdd(ctx context.Context, events []SystemEvent) error {
	if len(events) == 0 {
		return nil
	}
	p := queries.SystemEventsInsertParams{}
	for _, e := range events {
		b, err := jsonvalue.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("encode system event data: %w", err)
		}
		p.TenantIds, p.Ids, p.Names, p.Datas = append(p.TenantIds, e.TenantID), append(p.Ids, e.ID), append(p.Names, e.Name), append(p.Datas, b)
	}
	if _, err := s.q.SystemEventsInsert(ctx, p); err != nil {
		return fmt.Errorf("store system events: %w", err)
	}
	return nil
}
