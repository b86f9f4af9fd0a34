package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// Batch actions and statuses.
const (
	BatchCancel      = "cancel"
	BatchRetry       = "retry"
	BatchUpgradeRuns = "upgrade"

	BatchRunning   = "running"
	BatchCompleted = "completed"
	// BatchStopped is a batch stopped before its end: the runs it had
	// not reached are left as they were.
	BatchStopped = "stopped"
)

// Audit actions of batches.
const (
	AuditBatchCreate = "run.batch"
	AuditBatchFinish = "run.batch_finished"
	AuditBatchStop   = "run.batch_stopped"
)

// MaxBatchErrors bounds the failures a batch keeps (the count goes on).
const MaxBatchErrors = 100

// Batch is a bulk cancel or retry of runs, by filter or by ids, and its
// progress.
type Batch struct {
	TenantID uuid.UUID
	ID       uuid.UUID
	Action   string
	// Filter chooses the runs (its Before bounds them to the runs created
	// before the batch); nil for a batch of RunIDs.
	Filter *RunFilter
	RunIDs []uuid.UUID
	Reason string
	// Upgrade is the target of an upgrade batch.
	Upgrade *BatchUpgrade
	Actor   string
	Status  string
	Total   int
	Done    int
	Failed  int
	Errors  []BatchError
	// Cursor is where the next chunk of a filter batch starts (nil: at
	// Filter.Before); Index the next position in RunIDs.
	Cursor     *RunCursor
	Index      int
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// BatchError is why a batch could not act on one run.
type BatchError struct {
	RunID   uuid.UUID `json:"run_id"`
	Message string    `json:"message"`
}

// Finished reports whether the batch is done: with every run, or
// stopped.
func (b Batch) Finished() bool { return b.Status != BatchRunning }

// BatchCreate stores a new batch; one with nothing to do is completed at
// once.
func (s *Store) BatchCreate(ctx context.Context, b Batch) (Batch, error) {
	p := queries.RunBatchInsertParams{
		TenantID: b.TenantID, ID: b.ID, Action: b.Action, RunIds: b.RunIDs, Reason: b.Reason,
		Actor: b.Actor, Total: int32(b.Total), Status: BatchRunning,
	}
	if b.Total == 0 {
		p.Status, p.Finished = BatchCompleted, true
	}
	if b.Filter != nil {
		raw, err := jsonvalue.Marshal(b.Filter)
		if err != nil {
			return Batch{}, fmt.Errorf("encode batch filter: %w", err)
		}
		p.Filter = raw
	}
	row, err := s.q.RunBatchInsert(ctx, p)
	if err != nil {
		return Batch{}, fmt.Errorf("create batch: %w", err)
	}
	if b.Upgrade != nil {
		raw, err := json.Marshal(b.Upgrade)
		if err != nil {
			return Batch{}, err
		}
		if err := s.q.RunBatchSetUpgrade(ctx, queries.RunBatchSetUpgradeParams{TenantID: b.TenantID, ID: b.ID, Upgrade: raw}); err != nil {
			return Batch{}, fmt.Errorf("create batch: %w", err)
		}
		row.Upgrade = raw
	}
	return batchFromRow(row)
}

// BatchGet returns a tenant's batch.
func (s *Store) BatchGet(ctx context.Context, tenantID, id uuid.UUID) (Batch, error) {
	row, err := s.q.RunBatchGet(ctx, queries.RunBatchGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Batch{}, notFound(err, "batch")
	}
	return batchFromRow(row)
}

// BatchStop stops a running batch and returns it; ok is false when the
// batch is not running (or not the tenant's). It waits for the chunk a
// process may be working on, which holds the batch until it commits.
func (s *Store) BatchStop(ctx context.Context, tenantID, id uuid.UUID) (b Batch, ok bool, err error) {
	row, err := s.q.RunBatchStop(ctx, queries.RunBatchStopParams{TenantID: tenantID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Batch{}, false, nil
	}
	if err != nil {
		return Batch{}, false, fmt.Errorf("stop batch: %w", err)
	}
	b, err = batchFromRow(row)
	return b, err == nil, err
}

// BatchList returns a tenant's newest batches, at most max.
func (s *Store) BatchList(ctx context.Context, tenantID uuid.UUID, max int) ([]Batch, error) {
	rows, err := s.q.RunBatchList(ctx, queries.RunBatchListParams{TenantID: tenantID, MaxRows: int32(max)})
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	out := make([]Batch, len(rows))
	for i, r := range rows {
		if out[i], err = batchFromRow(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BatchClaim locks the running batch of the tenant whose turn it is (the
// one whose batches were served longest ago; its oldest batch) that no
// other transaction holds, until the caller's transaction ends; false
// when there is none. BatchProgress ends the tenant's turn.
func (s *Store) BatchClaim(ctx context.Context) (Batch, bool, error) {
	row, err := s.q.RunBatchClaim(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return Batch{}, false, nil
	}
	if err != nil {
		return Batch{}, false, fmt.Errorf("claim batch: %w", err)
	}
	b, err := batchFromRow(row)
	return b, err == nil, err
}

// BatchChunk is what one chunk of a batch did.
type BatchChunk struct {
	Done, Failed int
	Errors       []BatchError
	Cursor       *RunCursor
	Index        int
	Finished     bool
}

// BatchProgress records a chunk of a batch (in the transaction that did
// its work, so a chunk counts once) and sends the batch's tenant to the
// back of the round.
func (s *Store) BatchProgress(ctx context.Context, b Batch, c BatchChunk) error {
	// A chunk with no failures appends an empty array: a nil slice would
	// encode as null, which jsonb's || appends as one empty entry.
	keep := append([]BatchError{}, c.Errors[:min(len(c.Errors), max(0, MaxBatchErrors-len(b.Errors)))]...)
	raw, err := json.Marshal(keep)
	if err != nil {
		return fmt.Errorf("encode batch errors: %w", err)
	}
	p := queries.RunBatchProgressParams{
		DoneDelta: int32(c.Done), FailedDelta: int32(c.Failed), Errors: raw, CursorIndex: int32(c.Index),
		Finished: c.Finished, TenantID: b.TenantID, ID: b.ID,
	}
	if c.Cursor != nil {
		p.CursorCreatedAt = &c.Cursor.CreatedAt
		p.CursorID = uuid.NullUUID{UUID: c.Cursor.ID, Valid: true}
	}
	if err := s.q.RunBatchProgress(ctx, p); err != nil {
		return fmt.Errorf("record batch progress: %w", err)
	}
	if err := s.q.RunBatchServed(ctx, b.TenantID); err != nil {
		return fmt.Errorf("record batch turn: %w", err)
	}
	return nil
}

// BatchQueued locks the tenant's batch creation until the caller's
// transaction ends and returns how many runs its running batches have
// still to act on.
func (s *Store) BatchQueued(ctx context.Context, tenantID uuid.UUID) (int, error) {
	if err := s.q.RunBatchLockTenant(ctx, tenantID); err != nil {
		return 0, fmt.Errorf("lock batches: %w", err)
	}
	n, err := s.q.RunBatchQueued(ctx, tenantID)
	if err != nil {
		return 0, fmt.Errorf("count queued batch runs: %w", err)
	}
	return int(n), nil
}

func batchFromRow(r queries.RunBatch) (Batch, error) {
	b := Batch{
		TenantID: r.TenantID, ID: r.ID, Action: r.Action, RunIDs: r.RunIds, Reason: r.Reason, Actor: r.Actor,
		Status: r.Status, Total: int(r.Total), Done: int(r.Done), Failed: int(r.Failed), Index: int(r.CursorIndex),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt,
	}
	if len(r.Filter) > 0 {
		b.Filter = &RunFilter{}
		if err := jsonvalue.Unmarshal(r.Filter, b.Filter); err != nil {
			return b, fmt.Errorf("decode batch %s filter: %w", r.ID, err)
		}
	}
	if len(r.Upgrade) > 0 {
		b.Upgrade = &BatchUpgrade{}
		if err := json.Unmarshal(r.Upgrade, b.Upgrade); err != nil {
			return b, fmt.Errorf("decode batch %s upgrade: %w", r.ID, err)
		}
	}
	if err := json.Unmarshal(r.Errors, &b.Errors); err != nil {
		return b, fmt.Errorf("decode batch %s errors: %w", r.ID, err)
	}
	// Batches recorded before chunks appended [] kept a null per chunk
	// without failures.
	b.Errors = slices.DeleteFunc(b.Errors, func(e BatchError) bool { return e == BatchError{} })
	if r.CursorCreatedAt != nil && r.CursorID.Valid {
		b.Cursor = &RunCursor{CreatedAt: *r.CursorCreatedAt, ID: r.CursorID.UUID}
	}
	return b, nil
}

// BatchCutoff is the database's clock: a filter batch created now covers
// the runs created before it.
func (s *Store) BatchCutoff(ctx context.Context) (time.Time, error) {
	t, err := s.q.RunBatchNow(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the clock: %w", err)
	}
	return t, nil
}
