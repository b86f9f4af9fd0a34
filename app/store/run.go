package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// Run is a run row: the columns lists filter on, and the engine's state.
type Run struct {
	TenantID          uuid.UUID
	ID                uuid.UUID
	DefinitionKey     string
	DefinitionVersion int
	ManifestHash      string
	Status            engine.RunStatus
	// Reason says why the run was terminated, or why an operator
	// cancelled it (CancelledBy names who).
	Reason             string
	CancelledBy        string
	Subject            string
	SearchAttributes   map[string]any
	ParentRunID        *uuid.UUID
	RootRunID          uuid.UUID
	Depth              int
	ContinuedFromRunID *uuid.UUID
	ContinuedToRunID   *uuid.UUID
	IdempotencyKey     string
	State              engine.Run
	TransitionCount    int64
	RecordVersion      int64
	CreatedAt          time.Time
	FinishedAt         *time.Time
}

// NewRun is what RunCreate stores.
type NewRun struct {
	TenantID           uuid.UUID
	ID                 uuid.UUID
	DefinitionKey      string
	DefinitionVersion  int
	ManifestHash       string
	Subject            string
	SearchAttributes   map[string]any
	ParentRunID        *uuid.UUID
	RootRunID          uuid.UUID
	Depth              int
	ContinuedFromRunID *uuid.UUID
	IdempotencyKey     string
	// RequestHash identifies the request the idempotency key was sent with
	// (RequestHash); the same key with another request is refused.
	RequestHash string
	State       engine.Run
}

// RunCreate inserts a pending run with its wake flag clear: the caller
// ticks it inline or enqueues its first tick. A repeated idempotency key
// returns the run that key already made, with created false, or, when it
// came with a different request, an IdempotencyMismatch naming that run.
func (s *Store) RunCreate(ctx context.Context, n NewRun) (Run, bool, error) {
	state, err := encodeState(n.State)
	if err != nil {
		return Run{}, false, err
	}
	input, err := jsonvalue.Marshal(n.State.Input)
	if err != nil {
		return Run{}, false, fmt.Errorf("encode run input: %w", err)
	}
	attrs, err := jsonvalue.Marshal(orEmpty(n.SearchAttributes))
	if err != nil {
		return Run{}, false, fmt.Errorf("encode search attributes: %w", err)
	}
	row, err := s.q.RunInsert(ctx, queries.RunInsertParams{
		TenantID: n.TenantID, ID: n.ID, DefinitionKey: n.DefinitionKey,
		DefinitionVersion: int32(n.DefinitionVersion), ManifestHash: n.ManifestHash,
		Status: string(n.State.Status), Subject: n.Subject, SearchAttributes: attrs,
		ParentRunID: nullUUID(n.ParentRunID), RootRunID: n.RootRunID, Depth: int32(n.Depth),
		ContinuedFromRunID: nullUUID(n.ContinuedFromRunID), IdempotencyKey: nullText(n.IdempotencyKey),
		RequestHash: nullText(n.RequestHash), State: state, Input: input,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return s.runAfterConflict(ctx, n)
	}
	if err != nil {
		return Run{}, false, fmt.Errorf("insert run: %w", err)
	}
	r, err := runFromRow(row)
	return r, true, err
}

// RunOfIdempotencyKey returns the run n's idempotency key already made,
// found false when it made none (or n has no key); a different request
// under the key is an IdempotencyMismatch, as RunCreate's.
func (s *Store) RunOfIdempotencyKey(ctx context.Context, n NewRun) (Run, bool, error) {
	if n.IdempotencyKey == "" {
		return Run{}, false, nil
	}
	r, _, err := s.runAfterConflict(ctx, n)
	if apperr.Is(err, apperr.NotFound) {
		return Run{}, false, nil
	}
	return r, err == nil, err
}

func (s *Store) runAfterConflict(ctx context.Context, n NewRun) (Run, bool, error) {
	if n.IdempotencyKey == "" {
		r, err := s.RunGet(ctx, n.TenantID, n.ID)
		return r, false, err
	}
	row, err := s.q.RunGetByIdempotencyKey(ctx, queries.RunGetByIdempotencyKeyParams{
		TenantID: n.TenantID, DefinitionKey: n.DefinitionKey, IdempotencyKey: pgtype.Text{String: n.IdempotencyKey, Valid: true},
	})
	if err != nil {
		return Run{}, false, notFound(err, "run")
	}
	if err := checkRequest(row.RequestHash.String, n.RequestHash, "run", row.ID, n.IdempotencyKey); err != nil {
		return Run{}, false, err
	}
	r, err := runFromRow(row)
	return r, false, err
}

// RunGet returns a tenant's run.
func (s *Store) RunGet(ctx context.Context, tenantID, id uuid.UUID) (Run, error) {
	row, err := s.q.RunGet(ctx, queries.RunGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Run{}, notFound(err, "run")
	}
	return runFromRow(row)
}

// ErrConflict is returned when another tick committed first.
var ErrConflict = errors.New("run changed since it was read")

// RunRequestTick sets the run's wake flag and reports whether this call
// flipped it (and so must enqueue the tick).
func (s *Store) RunRequestTick(ctx context.Context, tenantID, id uuid.UUID) (bool, error) {
	flipped, err := s.q.RunRequestTick(ctx, queries.RunRequestTickParams{TenantID: tenantID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		// Locked by a tick in progress (enqueue one more), or no such run.
		return s.q.RunExists(ctx, queries.RunExistsParams{TenantID: tenantID, ID: id})
	}
	if err != nil {
		return false, fmt.Errorf("request tick: %w", err)
	}
	return flipped, nil
}

// RunClearTick clears the wake flag; a tick does it before reading.
func (s *Store) RunClearTick(ctx context.Context, tenantID, id uuid.UUID) error {
	if err := s.q.RunClearTick(ctx, queries.RunClearTickParams{TenantID: tenantID, ID: id}); err != nil {
		return fmt.Errorf("clear tick flag: %w", err)
	}
	return nil
}

// encodeState is the run's state JSON without its input, which has its own
// column: a tick rewrites the state, never the input.
func encodeState(st engine.Run) ([]byte, error) {
	st.Input = nil
	b, err := jsonvalue.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode run state: %w", err)
	}
	return b, nil
}

// LeanRun is a run as a tick reads it, with the database's clock.
type LeanRun struct {
	Run
	// Input is the decoded input when it was asked for, else nil.
	Input any
	Now   time.Time
}

// DecodeInput decodes a run's raw input JSON.
func DecodeInput(raw []byte) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := jsonvalue.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode run input: %w", err)
	}
	return v, nil
}

func runFromRow(r queries.Run) (Run, error) {
	var st engine.Run
	if err := jsonvalue.Unmarshal(r.State, &st); err != nil {
		return Run{}, fmt.Errorf("decode run %s state: %w", r.ID, err)
	}
	if len(r.Input) > 0 {
		in, err := DecodeInput(r.Input)
		if err != nil {
			return Run{}, err
		}
		st.Input = in
	}
	var attrs map[string]any
	if err := jsonvalue.Unmarshal(r.SearchAttributes, &attrs); err != nil {
		return Run{}, fmt.Errorf("decode run %s search attributes: %w", r.ID, err)
	}
	return Run{
		TenantID: r.TenantID, ID: r.ID, DefinitionKey: r.DefinitionKey,
		DefinitionVersion: int(r.DefinitionVersion), ManifestHash: r.ManifestHash,
		Status: engine.RunStatus(r.Status), Reason: cmp.Or(r.Reason.String, st.CancelReason), CancelledBy: st.CancelledBy, Subject: r.Subject,
		SearchAttributes: attrs, ParentRunID: uuidPtr(r.ParentRunID), RootRunID: r.RootRunID,
		Depth: int(r.Depth), ContinuedFromRunID: uuidPtr(r.ContinuedFromRunID),
		ContinuedToRunID: uuidPtr(r.ContinuedToRunID), IdempotencyKey: r.IdempotencyKey.String,
		State: st, TransitionCount: r.TransitionCount, RecordVersion: r.RecordVersion,
		CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt,
	}, nil
}

func nullUUID(id *uuid.UUID) uuid.NullUUID {
	if id == nil {
		return uuid.NullUUID{}
	}
	return uuid.NullUUID{UUID: *id, Valid: true}
}

func uuidPtr(n uuid.NullUUID) *uuid.UUID {
	if !n.Valid {
		return nil
	}
	return &n.UUID
}

func nullText(s string) pgtype.Text {
	return pgtype.Text{String: s, Valid: s != ""}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// RunChildCounts counts a run's child runs by status.
func (s *Store) RunChildCounts(ctx context.Context, tenantID, runID uuid.UUID) (map[string]int64, error) {
	rows, err := s.q.RunCountChildrenByStatus(ctx, queries.RunCountChildrenByStatusParams{
		TenantID: tenantID, ParentRunID: uuid.NullUUID{UUID: runID, Valid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("count child runs: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Status] = r.Runs
	}
	return out, nil
}

// RunGetLocked returns a tenant's run with its row locked, waiting for a
// tick that holds it, so that what the caller decides on the run's status
// (or its successor) holds until it commits.
func (s *Store) RunGetLocked(ctx context.Context, tenantID, id uuid.UUID) (Run, error) {
	row, err := s.q.RunGetLocked(ctx, queries.RunGetLockedParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Run{}, notFound(err, "run")
	}
	return runFromRow(row)
}

// RunLock locks the run row, waiting for a transaction that holds it:
// every tick holds its run's lock before it reads, so ticks never deadlock
// on node rows and a hot run is decided once.
func (s *Store) RunLock(ctx context.Context, tenantID, id uuid.UUID) error {
	_, err := s.RunLockVersion(ctx, tenantID, id)
	return err
}

// RunLockVersion is RunLock, returning the run's record_version as of the
// lock: a tick that decided on a read taken before it locked persists
// only if the version is still the one it read.
func (s *Store) RunLockVersion(ctx context.Context, tenantID, id uuid.UUID) (int64, error) {
	v, err := s.q.RunLock(ctx, queries.RunLockParams{TenantID: tenantID, ID: id})
	if err != nil {
		return 0, notFound(err, "run")
	}
	return v, nil
}
