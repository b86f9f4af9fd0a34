package runs

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/sysevents"
)

// DecideApproval records one person's decision on an approval and hands
// it to the run's next tick, in one transaction. A decided approval, or a
// second decision by the same person, is a Conflict.
func (c *Service) DecideApproval(ctx context.Context, tenantID, id uuid.UUID, d store.Decision) (store.Approval, error) {
	var a store.Approval
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		a, err = store.New(tx).ApprovalDecide(ctx, tenantID, id, d)
		if err != nil {
			return err
		}
		in := engine.ApprovalDecided{Node: a.Node, Approved: d.Approved, By: d.By, Comment: d.Comment, Approval: a.ID.String()}
		if err := c.w.Deliver(ctx, tx, tenantID, a.RunID, in); err != nil {
			return err
		}
		return approvalDecidedEvent(ctx, store.New(tx), tenantID, a, d)
	})
	return a, err
}

// approvalDecidedEvent stores ductor.approval.decided in the transaction
// of the decision that decided the approval (not of each decision
// counting towards min_approvals).
func approvalDecidedEvent(ctx context.Context, s *store.Store, tenantID uuid.UUID, a store.Approval, d store.Decision) error {
	if a.Status == store.ApprovalPending {
		return nil
	}
	r, err := s.RunGet(ctx, tenantID, a.RunID)
	if err != nil {
		return err
	}
	for _, e := range sysevents.Decided(sysevents.ApprovalDecision{
		Run: sysevents.Run{
			TenantID: r.TenantID, ID: r.ID, Definition: r.DefinitionKey, Version: r.DefinitionVersion,
			Subject: r.Subject, SearchAttributes: r.SearchAttributes, ParentRunID: r.ParentRunID,
		},
		Node: a.Node, Key: a.ID.String(), Decision: a.Status, By: d.By,
	}) {
		if _, err := s.SystemEventAdd(ctx, tenantID, e.ID, e.Name, e.Data); err != nil {
			return err
		}
	}
	return nil
}

// CaseChange is an update of a human_loop case; nil fields stay.
type CaseChange struct {
	Status *string
	Data   any
	// Actor is who makes the change (user:EMAIL, key:PREFIX): the case
	// keeps it, and the audit log records the change by them.
	Actor string
}

// UpdateCase changes a case's status and data (validated against the
// case's fields schema) and, when the case reaches the status its node
// awaits, resumes the node with the case data.
func (c *Service) UpdateCase(ctx context.Context, tenantID, id uuid.UUID, ch CaseChange) (store.Case, error) {
	if ch.Status != nil && (strings.TrimSpace(*ch.Status) == "" || len(*ch.Status) > 64) {
		return store.Case{}, apperr.New(apperr.Invalid, "status must be 1 to 64 characters")
	}
	if err := checkPayload("case data", "data", ch.Data); err != nil {
		return store.Case{}, err
	}
	var out store.Case
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		out, err = store.New(tx).CaseUpdate(ctx, tenantID, id, store.CaseChange{Status: ch.Status, Data: ch.Data, Actor: ch.Actor, Validate: validateCaseData})
		if err != nil || out.Status != out.AwaitingStatus {
			return err
		}
		in := engine.CaseStatusChanged{Node: out.Node, Status: out.Status, Data: out.Data}
		return c.w.Deliver(ctx, tx, tenantID, out.RunID, in)
	})
	return out, err
}

// validateCaseData checks case data against the fields JSON Schema; the
// problems' paths start at "data".
func validateCaseData(fields, data any) error {
	if fields == nil {
		return nil
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	err = definition.ValidateInput(&definition.Manifest{InputSchema: raw}, data)
	var ie *definition.InputError
	if !errors.As(err, &ie) {
		return err
	}
	problems := make([]definition.Problem, len(ie.Problems))
	for i, p := range ie.Problems {
		p.Path = "data" + strings.TrimPrefix(p.Path, "input")
		problems[i] = p
	}
	return apperr.New(apperr.Unprocessable, "case data does not match the case's fields").WithDetails(problems)
}
