package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// Event is a tenant-wide event.
type Event struct {
	TenantID       uuid.UUID `json:"-"`
	ID             uuid.UUID `json:"id"`
	Name           string    `json:"name"`
	Data           any       `json:"data"`
	IdempotencyKey string    `json:"idempotency_key,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	// RequestHash identifies the request the idempotency key was sent with
	// (RequestHash); the same key with another request is refused.
	RequestHash string `json:"-"`
	// MatchRequest asks Publish to set RequestHash: the key names this
	// very request (the API's, and a webhook's: a delivery id names one
	// delivery, whose retries carry the same body).
	MatchRequest bool `json:"-"`
}

// EventAdd stores an event. A repeated idempotency key stores nothing and
// returns the first event with created false, or, when it came with a
// different request, an IdempotencyMismatch naming that event.
func (s *Store) EventAdd(ctx context.Context, e Event) (Event, bool, error) {
	data, err := jsonvalue.Marshal(e.Data)
	if err != nil {
		return Event{}, false, fmt.Errorf("encode event data: %w", err)
	}
	row, err := s.q.EventInsert(ctx, queries.EventInsertParams{
		TenantID: e.TenantID, ID: e.ID, Name: e.Name, Data: data,
		IdempotencyKey: pgtype.Text{String: e.IdempotencyKey, Valid: e.IdempotencyKey != ""},
		RequestHash:    nullText(e.RequestHash),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		row, err = s.q.EventGetByKey(ctx, queries.EventGetByKeyParams{
			TenantID: e.TenantID, IdempotencyKey: pgtype.Text{String: e.IdempotencyKey, Valid: true},
		})
		if err != nil {
			return Event{}, false, notFound(err, "event")
		}
		if err := checkRequest(row.RequestHash.String, e.RequestHash, "event", row.ID, e.IdempotencyKey); err != nil {
			return Event{}, false, err
		}
		out, err := eventFromRow(row)
		return out, false, err
	}
	if err != nil {
		return Event{}, false, fmt.Errorf("store event: %w", err)
	}
	out, err := eventFromRow(row)
	return out, true, err
}

func eventFromRow(r queries.Event) (Event, error) {
	e := Event{TenantID: r.TenantID, ID: r.ID, Name: r.Name, IdempotencyKey: r.IdempotencyKey.String, CreatedAt: r.CreatedAt}
	if err := decodeJSON(r.Data, &e.Data); err != nil {
		return Event{}, fmt.Errorf("decode event %s: %w", r.ID, err)
	}
	return e, nil
}

// EventWaitingRuns lists the runs with a node waiting for events of the
// name, found through the (tenant, name) index.
func (s *Store) EventWaitingRuns(ctx context.Context, tenantID uuid.UUID, name string) ([]uuid.UUID, error) {
	ids, err := s.q.EventWaitRuns(ctx, queries.EventWaitRunsParams{TenantID: tenantID, Name: name})
	if err != nil {
		return nil, fmt.Errorf("find runs waiting for %q: %w", name, err)
	}
	return ids, nil
}

// EventWaitSet makes the node listen for the event names (names empty:
// the node no longer listens).
func (s *Store) EventWaitSet(ctx context.Context, tenantID, runID uuid.UUID, node string, names []string) error {
	err := s.q.EventWaitDelete(ctx, queries.EventWaitDeleteParams{TenantID: tenantID, RunID: runID, Node: node})
	if err != nil {
		return fmt.Errorf("clear event wait of %s: %w", node, err)
	}
	if len(names) == 0 {
		return nil
	}
	err = s.q.EventWaitUpsert(ctx, queries.EventWaitUpsertParams{TenantID: tenantID, Names: names, RunID: runID, Node: node})
	if err != nil {
		return fmt.Errorf("record event wait of %s: %w", node, err)
	}
	return nil
}

// EventUse records that a node consumed an event.
func (s *Store) EventUse(ctx context.Context, tenantID, runID uuid.UUID, node string, eventID uuid.UUID) error {
	err := s.q.EventUseInsert(ctx, queries.EventUseInsertParams{TenantID: tenantID, RunID: runID, Node: node, EventID: eventID})
	if err != nil {
		return fmt.Errorf("record event use: %w", err)
	}
	return nil
}

// EventUses lists the (node, event id) pairs a run consumed.
func (s *Store) EventUses(ctx context.Context, tenantID, runID uuid.UUID) (map[string][]uuid.UUID, error) {
	rows, err := s.q.EventUseList(ctx, queries.EventUseListParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("list event uses: %w", err)
	}
	out := map[string][]uuid.UUID{}
	for _, r := range rows {
		out[r.Node] = append(out[r.Node], r.EventID)
	}
	return out, nil
}
