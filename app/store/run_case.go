package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// Case is a human_loop case: people work it until it reaches the status
// its node awaits.
type Case struct {
	TenantID       uuid.UUID `json:"-"`
	ID             uuid.UUID `json:"id"`
	RunID          uuid.UUID `json:"run_id"`
	Node           string    `json:"node"`
	Title          string    `json:"title"`
	Assignees      []string  `json:"assignees"`
	Fields         any       `json:"fields"`
	AwaitingStatus string    `json:"awaiting_status"`
	Status         string    `json:"status"`
	Data           any       `json:"data"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	// UpdatedBy is the actor of the last change (user:EMAIL, key:PREFIX),
	// empty while nobody changed the case.
	UpdatedBy string     `json:"updated_by"`
	ClosedAt  *time.Time `json:"closed_at"`
}

// CaseOpen is the status of a new case.
const CaseOpen = "open"

// CaseCreate stores a new case; creating the same id again does nothing.
func (s *Store) CaseCreate(ctx context.Context, c Case) error {
	fields, err := jsonvalue.Marshal(c.Fields)
	if err != nil {
		return fmt.Errorf("encode case fields: %w", err)
	}
	err = s.q.RunCaseInsert(ctx, queries.RunCaseInsertParams{
		TenantID: c.TenantID, ID: c.ID, RunID: c.RunID, Node: c.Node, Title: c.Title,
		Assignees: orNone(c.Assignees), Fields: fields, AwaitingStatus: c.AwaitingStatus,
	})
	if err != nil {
		return fmt.Errorf("open case: %w", err)
	}
	return nil
}

// CaseClose marks a case closed: its node no longer waits on it.
func (s *Store) CaseClose(ctx context.Context, tenantID, id uuid.UUID) error {
	if err := s.q.RunCaseClose(ctx, queries.RunCaseCloseParams{TenantID: tenantID, ID: id}); err != nil {
		return fmt.Errorf("close case: %w", err)
	}
	return nil
}

// CaseGet returns a case.
func (s *Store) CaseGet(ctx context.Context, tenantID, id uuid.UUID) (Case, error) {
	row, err := s.q.RunCaseGet(ctx, queries.RunCaseGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Case{}, notFound(err, "case")
	}
	return caseFromRow(row)
}

// CaseFilter narrows CaseList.
type CaseFilter struct {
	Status string
	// Who, when set, keeps cases assigned to any entry (see Audience).
	Who   []string
	Limit int
}

// CaseList returns the tenant's cases matching f, newest first.
func (s *Store) CaseList(ctx context.Context, tenantID uuid.UUID, f CaseFilter) ([]Case, error) {
	rows, err := s.q.RunCaseList(ctx, queries.RunCaseListParams{
		TenantID: tenantID, Status: f.Status, Who: orNone(f.Who), MaxRows: int32(limitOr(f.Limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("list cases: %w", err)
	}
	return casesFromRows(rows)
}

// CasesFor is a person's case inbox: cases assigned to their email or one
// of their roles.
func (s *Store) CasesFor(ctx context.Context, tenantID uuid.UUID, email string, roles []string, status string) ([]Case, error) {
	return s.CaseList(ctx, tenantID, CaseFilter{Status: status, Who: Audience(email, roles...)})
}

// CasesOfRun lists a run's cases, oldest first.
func (s *Store) CasesOfRun(ctx context.Context, tenantID, runID uuid.UUID) ([]Case, error) {
	rows, err := s.q.RunCaseListByRun(ctx, queries.RunCaseListByRunParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("list cases of run: %w", err)
	}
	return casesFromRows(rows)
}

// CaseChange is an update of a case: nil fields stay as they are.
type CaseChange struct {
	Status *string
	Data   any
	// Actor is who makes the change: the case keeps it as UpdatedBy and
	// the audit log records the change by them (empty: neither).
	Actor string
	// Validate checks the new data against the case's fields schema.
	Validate func(fields, data any) error
}

// CaseUpdate changes a case's status and data in the caller's
// transaction, and records the change by its actor in the audit log. A
// closed case is a Conflict; reaching the awaited status closes it.
func (s *Store) CaseUpdate(ctx context.Context, tenantID, id uuid.UUID, ch CaseChange) (Case, error) {
	row, err := s.q.RunCaseGetForUpdate(ctx, queries.RunCaseGetForUpdateParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Case{}, notFound(err, "case")
	}
	c, err := caseFromRow(row)
	if err != nil {
		return Case{}, err
	}
	if c.ClosedAt != nil {
		return Case{}, apperr.New(apperr.Conflict, "case is closed (status %s)", c.Status)
	}
	from := c.Status
	if ch.Status != nil {
		c.Status = *ch.Status
	}
	if ch.Data != nil {
		c.Data = ch.Data
	}
	if ch.Validate != nil {
		if err := ch.Validate(c.Fields, c.Data); err != nil {
			return Case{}, err
		}
	}
	data, err := jsonvalue.Marshal(c.Data)
	if err != nil {
		return Case{}, fmt.Errorf("encode case data: %w", err)
	}
	row, err = s.q.RunCaseUpdate(ctx, queries.RunCaseUpdateParams{
		Status: c.Status, Data: data, UpdatedBy: ch.Actor, Close: c.Status == c.AwaitingStatus, TenantID: tenantID, ID: id,
	})
	if err != nil {
		return Case{}, fmt.Errorf("update case: %w", err)
	}
	if ch.Actor != "" {
		details := map[string]any{"run_id": c.RunID, "node": c.Node, "from": from, "status": c.Status, "data_changed": ch.Data != nil}
		if err := s.AuditRecord(ctx, tenantID, ch.Actor, AuditCaseUpdate, id.String(), details); err != nil {
			return Case{}, err
		}
	}
	return caseFromRow(row)
}

func casesFromRows(rows []queries.RunCase) ([]Case, error) {
	out := make([]Case, len(rows))
	for i, r := range rows {
		c, err := caseFromRow(r)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func caseFromRow(r queries.RunCase) (Case, error) {
	c := Case{
		TenantID: r.TenantID, ID: r.ID, RunID: r.RunID, Node: r.Node, Title: r.Title, Assignees: r.Assignees,
		AwaitingStatus: r.AwaitingStatus, Status: r.Status, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy, ClosedAt: r.ClosedAt,
	}
	if err := decodeJSON(r.Fields, &c.Fields); err != nil {
		return Case{}, fmt.Errorf("decode case %s fields: %w", r.ID, err)
	}
	if err := decodeJSON(r.Data, &c.Data); err != nil {
		return Case{}, fmt.Errorf("decode case %s data: %w", r.ID, err)
	}
	return c, nil
}
