package runs

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

// ContinueAsNew asks a run to continue as a new run and returns the id its
// successor will have: the same for the same request id, from any replica.
// An ended run cannot continue (Conflict), unless it ended by continuing
// for this very request, which then answers the same successor again.
// The run is locked while its status is checked and the intent stored, so
// no tick ends it in between.
func (c *Service) ContinueAsNew(ctx context.Context, tenantID, runID uuid.UUID, requestID string, input any) (string, error) {
	if requestID == "" {
		return "", apperr.New(apperr.Invalid, "request_id is required")
	}
	if nul, found := jsonvalue.FindNUL(input); found {
		return "", NULProblem("input", "input"+nul.Path)
	}
	successor := engine.SuccessorRunID(runID.String(), requestID)
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		if err := s.RunLock(ctx, tenantID, runID); err != nil {
			return err
		}
		run, err := s.RunGet(ctx, tenantID, runID)
		if err != nil {
			return err
		}
		if run.Status.Terminal() {
			if run.ContinuedToRunID != nil && run.ContinuedToRunID.String() == successor {
				return nil
			}
			return apperr.New(apperr.Conflict, "run %s has ended (%s): only a running or waiting run can continue as new", run.ID, run.Status)
		}
		if p := run.State.PendingCAN; p != nil && p.RequestID != requestID {
			return apperr.New(apperr.Conflict, "run %s is already continuing as new (request %q)", run.ID, p.RequestID)
		}
		return c.w.Deliver(ctx, tx, tenantID, runID, engine.ContinueAsNew{RequestID: requestID, Input: input})
	})
	if err != nil {
		return "", err
	}
	return successor, nil
}
