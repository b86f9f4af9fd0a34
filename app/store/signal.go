package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// Signal statuses as stored in run_signal.status.
const (
	SignalPending  = "pending"
	SignalBuffered = string(engine.SignalBuffered)
	SignalConsumed = string(engine.SignalConsumed)
	SignalRejected = string(engine.SignalRejected)
)

// SignalRecord is a signal row: what was sent and what became of it.
type SignalRecord struct {
	engine.Signal
	RunID     uuid.UUID `json:"run_id"`
	Status    string    `json:"status"`
	Node      string    `json:"node,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// RunChainRoot is the first run of the run's ContinueAsNew chain: the
// scope in which a signal's request id is unique.
func (s *Store) RunChainRoot(ctx context.Context, tenantID, runID uuid.UUID) (uuid.UUID, error) {
	id, err := s.q.RunChainRoot(ctx, queries.RunChainRootParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return uuid.Nil, notFound(err, "run")
	}
	return id, nil
}

// SignalAdd stores a signal for the run, unique by request id within the
// run's chain; added is false for a repeated request id.
func (s *Store) SignalAdd(ctx context.Context, tenantID, chainRunID, runID uuid.UUID, sig engine.Signal) (added bool, err error) {
	payload, err := jsonvalue.Marshal(sig.Payload)
	if err != nil {
		return false, fmt.Errorf("encode signal payload: %w", err)
	}
	n, err := s.q.RunSignalInsert(ctx, queries.RunSignalInsertParams{
		TenantID: tenantID, ChainRunID: chainRunID, RequestID: sig.RequestID, RunID: runID,
		Name: sig.Name, Payload: payload,
	})
	if err != nil {
		return false, fmt.Errorf("store signal: %w", err)
	}
	return n == 1, nil
}

// SignalLock serialises, until tx ends, the senders of signals to the
// run: count with SignalsOpen and add after it.
func (s *Store) SignalLock(ctx context.Context, runID uuid.UUID) error {
	if err := s.q.RunSignalLock(ctx, signalLockKey(runID)); err != nil {
		return fmt.Errorf("lock the run's signals: %w", err)
	}
	return nil
}

// signalLockKey is the run's advisory lock key: its id's first 64 bits
// (random in a v4 uuid), with a tag so other advisory locks rarely share
// it.
func signalLockKey(runID uuid.UUID) int64 {
	return int64(binary.BigEndian.Uint64(runID[:8]) ^ 0x5349474e414c5321) // "SIGNALS!"
}

// SignalsOpen counts the run's signals not consumed yet (pending or
// buffered): what the per-run bound measures.
func (s *Store) SignalsOpen(ctx context.Context, tenantID, runID uuid.UUID) (int, error) {
	n, err := s.q.RunSignalCountOpen(ctx, queries.RunSignalCountOpenParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return 0, fmt.Errorf("count open signals: %w", err)
	}
	return int(n), nil
}

// SignalsBuffered returns the run's buffered signals, oldest first: the
// engine's State.Signals.
func (s *Store) SignalsBuffered(ctx context.Context, tenantID, runID uuid.UUID) ([]engine.Signal, error) {
	rows, err := s.q.RunSignalListBuffered(ctx, queries.RunSignalListBufferedParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("load buffered signals: %w", err)
	}
	out := make([]engine.Signal, len(rows))
	for i, r := range rows {
		rec, err := signalFromRow(r)
		if err != nil {
			return nil, err
		}
		out[i] = rec.Signal
	}
	return out, nil
}

// SignalsApply records what a tick did with signals: consumed (by which
// node), buffered or rejected.
func (s *Store) SignalsApply(ctx context.Context, tenantID, chainRunID uuid.UUID, changes []engine.SignalChange) error {
	for _, c := range changes {
		err := s.q.RunSignalSetStatus(ctx, queries.RunSignalSetStatusParams{
			Status: string(c.Action), Node: c.Node, TenantID: tenantID, ChainRunID: chainRunID, RequestID: c.Signal.RequestID,
		})
		if err != nil {
			return fmt.Errorf("signal %s %s: %w", c.Signal.RequestID, c.Action, err)
		}
	}
	return nil
}

// SignalsMove hands the run's pending and buffered signals to its
// ContinueAsNew successor; request ids stay unique across the chain.
func (s *Store) SignalsMove(ctx context.Context, tenantID, fromRunID, toRunID uuid.UUID) (int, error) {
	n, err := s.q.RunSignalMove(ctx, queries.RunSignalMoveParams{TenantID: tenantID, FromRunID: fromRunID, ToRunID: toRunID})
	if err != nil {
		return 0, fmt.Errorf("move signals to successor: %w", err)
	}
	return int(n), nil
}

// SignalsList returns every signal the run holds, in arrival order.
func (s *Store) SignalsList(ctx context.Context, tenantID, runID uuid.UUID) ([]SignalRecord, error) {
	rows, err := s.q.RunSignalList(ctx, queries.RunSignalListParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("list signals: %w", err)
	}
	out := make([]SignalRecord, len(rows))
	for i, r := range rows {
		if out[i], err = signalFromRow(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func signalFromRow(r queries.RunSignal) (SignalRecord, error) {
	rec := SignalRecord{
		Signal: engine.Signal{RequestID: r.RequestID, Name: r.Name},
		RunID:  r.RunID, Status: r.Status, Node: r.Node, CreatedAt: r.CreatedAt,
	}
	if err := decodeJSON(r.Payload, &rec.Payload); err != nil {
		return SignalRecord{}, fmt.Errorf("decode signal %s: %w", r.RequestID, err)
	}
	return rec, nil
}

// decodeJSON decodes raw into v; empty raw leaves v alone.
func decodeJSON(raw []byte, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return jsonvalue.Unmarshal(raw, v)
}
