package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// EventTrigger is an event trigger of a definition's newest published
// version.
type EventTrigger struct {
	TenantID    uuid.UUID  `json:"-"`
	Name        string     `json:"event"`
	Definition  string     `json:"definition"`
	Position    int        `json:"position"`
	FilterExpr  string     `json:"filter_expr,omitempty"`
	InputExpr   string     `json:"input_expr,omitempty"`
	Started     int64      `json:"started"`
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
}

// EventTriggersFor lists the triggers an event of the name starts.
func (s *Store) EventTriggersFor(ctx context.Context, tenantID uuid.UUID, name string) ([]EventTrigger, error) {
	rows, err := s.q.EventTriggersByName(ctx, queries.EventTriggersByNameParams{TenantID: tenantID, Name: name})
	if err != nil {
		return nil, fmt.Errorf("find triggers of %q: %w", name, err)
	}
	return eventTriggersFromRows(rows), nil
}

// EventTriggersOf lists a definition's event triggers.
func (s *Store) EventTriggersOf(ctx context.Context, tenantID uuid.UUID, key string) ([]EventTrigger, error) {
	rows, err := s.q.EventTriggersByDefinition(ctx, queries.EventTriggersByDefinitionParams{TenantID: tenantID, DefinitionKey: key})
	if err != nil {
		return nil, fmt.Errorf("find triggers of %s: %w", key, err)
	}
	return eventTriggersFromRows(rows), nil
}

func eventTriggersFromRows(rows []queries.EventTrigger) []EventTrigger {
	out := make([]EventTrigger, len(rows))
	for i, r := range rows {
		out[i] = EventTrigger{
			TenantID: r.TenantID, Name: r.Name, Definition: r.DefinitionKey, Position: int(r.Position),
			FilterExpr: r.FilterExpr, InputExpr: r.InputExpr, Started: r.Started, LastError: r.LastError, LastErrorAt: r.LastErrorAt,
		}
	}
	return out
}

// EventTriggerStarted counts a run the trigger started.
func (s *Store) EventTriggerStarted(ctx context.Context, t EventTrigger) error {
	err := s.q.EventTriggerRecordStart(ctx, queries.EventTriggerRecordStartParams{TenantID: t.TenantID, Name: t.Name, DefinitionKey: t.Definition, Position: int32(t.Position)})
	if err != nil {
		return fmt.Errorf("count a start of %s: %w", t.Definition, err)
	}
	return nil
}

// EventTriggerFailed records why the trigger's filter or input could not
// be evaluated.
func (s *Store) EventTriggerFailed(ctx context.Context, t EventTrigger, msg string) error {
	err := s.q.EventTriggerRecordError(ctx, queries.EventTriggerRecordErrorParams{TenantID: t.TenantID, Name: t.Name, DefinitionKey: t.Definition, Position: int32(t.Position), LastError: msg})
	if err != nil {
		return fmt.Errorf("record a failure of %s: %w", t.Definition, err)
	}
	return nil
}
