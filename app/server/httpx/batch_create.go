package httpx

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// BatchJSON is a bulk operation and its progress as the API shows it.
type BatchJSON struct {
	ID         string             `json:"id"`
	Action     string             `json:"action"`
	Status     string             `json:"status"`
	Total      int                `json:"total"`
	Done       int                `json:"done"`
	Failed     int                `json:"failed"`
	Reason     string             `json:"reason,omitempty"`
	CreatedBy  string             `json:"created_by"`
	CreatedAt  time.Time          `json:"created_at"`
	FinishedAt *time.Time         `json:"finished_at"`
	Errors     []store.BatchError `json:"errors"`
}

// BatchJSONOf is the JSON of a batch.
func BatchJSONOf(b store.Batch) BatchJSON {
	errs := b.Errors
	if errs == nil {
		errs = []store.BatchError{}
	}
	return BatchJSON{
		ID: b.ID.String(), Action: b.Action, Status: b.Status, Total: b.Total, Done: b.Done, Failed: b.Failed,
		Reason: b.Reason, CreatedBy: b.Actor, CreatedAt: b.CreatedAt, FinishedAt: b.FinishedAt, Errors: errs,
	}
}

// BatchRequest is a batch action on runs, from the API or the runs list.
type BatchRequest struct {
	Action string      `json:"action"`
	Filter *RunQuery   `json:"filter"`
	RunIDs []uuid.UUID `json:"run_ids"`
	Reason string      `json:"reason"`
	// Version and CancelRemoved are an upgrade's (action upgrade): the
	// version to move each run to (of the filter's definition).
	Version       int  `json:"version"`
	CancelRemoved bool `json:"cancel_removed"`
}

// NewBatch checks a batch request and builds the batch.
func NewBatch(ctx context.Context, s *store.Store, tenantID uuid.UUID, req BatchRequest, actor string) (store.Batch, error) {
	b := store.Batch{TenantID: tenantID, ID: uuid.New(), Action: req.Action, Reason: req.Reason, Actor: actor}
	switch {
	case req.Action != store.BatchCancel && req.Action != store.BatchRetry && req.Action != store.BatchUpgradeRuns:
		return b, apperr.New(apperr.Invalid, `action must be "cancel", "retry" or "upgrade"`)
	case req.Action == store.BatchUpgradeRuns && req.Version < 1:
		return b, apperr.New(apperr.Invalid, "version is required for an upgrade: the published version to move the runs to")
	case req.Action == store.BatchUpgradeRuns && (req.Filter == nil || req.Filter.Definition == "" || (req.Filter.DefinitionMatch != "" && req.Filter.DefinitionMatch != "exact")):
		return b, apperr.New(apperr.Invalid, "an upgrade's filter names its definition (filter.definition, matched exactly)")
	case req.Action != store.BatchUpgradeRuns && (req.Version != 0 || req.CancelRemoved):
		return b, apperr.New(apperr.Invalid, "version and cancel_removed belong to an upgrade")
	case (req.Filter == nil) == (req.RunIDs == nil):
		return b, apperr.New(apperr.Invalid, "give either a filter or run_ids")
	case utf8.RuneCountInString(req.Reason) > MaxReasonLength:
		return b, apperr.New(apperr.Invalid, "reason is longer than %d characters", MaxReasonLength)
	case len(req.RunIDs) > runs.MaxBatchRuns:
		return b, apperr.New(apperr.Invalid, "a batch covers at most %d runs", runs.MaxBatchRuns)
	}
	b.RunIDs = req.RunIDs
	if req.Action == store.BatchUpgradeRuns {
		b.Upgrade = &store.BatchUpgrade{Version: req.Version, CancelRemoved: req.CancelRemoved}
	}
	if req.Filter != nil {
		f, err := req.Filter.Filter(ctx, s, tenantID)
		if err != nil {
			return b, err
		}
		b.Filter = &f
	}
	return b, nil
}
