package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// Flow control's rows: the keys' locks, held runs, open debounces and
// the starts throttles and rate limits count (slots: flow_slots.go).

// FlowKey is one key of one pool.
type FlowKey struct{ Pool, Key string }

// FlowLockKey is one key of one pool of a tenant.
type FlowLockKey struct {
	TenantID uuid.UUID
	FlowKey
}

// flowLockIDs are the advisory locks of keys, each once, in ascending
// order: every transaction takes them in that order, so two never wait
// for each other's. Two keys may share a lock (a 64-bit hash), which
// only makes them wait for each other.
func flowLockIDs(keys []FlowLockKey) []int64 {
	ids := make([]int64, 0, len(keys))
	for _, k := range keys {
		h := sha256.New()
		h.Write(k.TenantID[:])
		h.Write([]byte(k.Pool + "\x00" + k.Key))
		ids = append(ids, int64(binary.BigEndian.Uint64(h.Sum(nil)[:8])))
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func tenantKeys(tenantID uuid.UUID, keys []FlowKey) []FlowLockKey {
	out := make([]FlowLockKey, len(keys))
	for i, k := range keys {
		out[i] = FlowLockKey{TenantID: tenantID, FlowKey: k}
	}
	return out
}

// FlowLock waits for the locks of a tenant's keys, held until the
// transaction ends.
func (s *Store) FlowLock(ctx context.Context, tenantID uuid.UUID, keys []FlowKey) error {
	return s.FlowLockAll(ctx, tenantKeys(tenantID, keys))
}

// FlowLockAll waits for the locks of keys of any tenants.
func (s *Store) FlowLockAll(ctx context.Context, keys []FlowLockKey) error {
	if len(keys) == 0 {
		return nil
	}
	if err := s.q.FlowLock(ctx, flowLockIDs(keys)); err != nil {
		return fmt.Errorf("lock flow keys: %w", err)
	}
	return nil
}

// FlowTryLock takes the locks of a tenant's keys unless another
// transaction holds one; it reports whether it took them all.
func (s *Store) FlowTryLock(ctx context.Context, tenantID uuid.UUID, keys []FlowKey) (bool, error) {
	ok, err := s.q.FlowTryLock(ctx, flowLockIDs(tenantKeys(tenantID, keys)))
	if err != nil {
		return false, fmt.Errorf("lock flow keys: %w", err)
	}
	return ok, nil
}

// Stages of a held run.
const (
	StageDebounce    = "debounce"
	StageThrottle    = "throttle"
	StageConcurrency = "concurrency"
)

// FlowRule is one rule a held run waits on, with its key.
type FlowRule struct {
	Rule  string `json:"rule"`
	Key   string `json:"key"`
	Limit int    `json:"limit,omitempty"`
}

// FlowHold is a run flow control holds back: what it waits for (Stage,
// and the Rules with their keys) and until when (DueAt, for a debounce or
// a throttle), with the run's status and the database's clock.
type FlowHold struct {
	TenantID, RunID uuid.UUID
	Stage           string
	DueAt           *time.Time
	Rules           []FlowRule
	Since           time.Time
	RunStatus       engine.RunStatus
	DefinitionKey   string
	ManifestHash    string
	Now             time.Time
}

// FlowHoldSet records what a held run waits for: its stage, until
// when (a debounce's or throttle's due time) and the rules with their
// keys.
func (s *Store) FlowHoldSet(ctx context.Context, tenantID, runID uuid.UUID, stage string, due *time.Time, rules []FlowRule) error {
	detail, err := json.Marshal(rules)
	if err != nil {
		return err
	}
	if err := s.q.FlowHoldUpsert(ctx, queries.FlowHoldUpsertParams{TenantID: tenantID, RunID: runID, Stage: stage, DueAt: due, Detail: detail}); err != nil {
		return fmt.Errorf("hold run: %w", err)
	}
	return nil
}

// FlowHoldDue puts off a debounce's end.
func (s *Store) FlowHoldDue(ctx context.Context, tenantID, runID uuid.UUID, due time.Time) error {
	if err := s.q.FlowHoldDue(ctx, queries.FlowHoldDueParams{TenantID: tenantID, RunID: runID, DueAt: &due}); err != nil {
		return fmt.Errorf("put off hold: %w", err)
	}
	return nil
}

// FlowHoldRelease forgets a hold (its run is admitted, or refused).
func (s *Store) FlowHoldRelease(ctx context.Context, tenantID, runID uuid.UUID) error {
	if err := s.q.FlowHoldDelete(ctx, queries.FlowHoldDeleteParams{TenantID: tenantID, RunID: runID}); err != nil {
		return fmt.Errorf("release hold: %w", err)
	}
	return nil
}

// FlowHoldGet returns a run's hold; NotFound when flow control does not
// hold it.
func (s *Store) FlowHoldGet(ctx context.Context, tenantID, runID uuid.UUID) (FlowHold, error) {
	row, err := s.q.FlowHoldGet(ctx, queries.FlowHoldGetParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return FlowHold{}, notFound(err, "hold")
	}
	h := FlowHold{
		TenantID: row.FlowHold.TenantID, RunID: row.FlowHold.RunID, Stage: row.FlowHold.Stage, DueAt: row.FlowHold.DueAt,
		Since: row.FlowHold.CreatedAt, RunStatus: engine.RunStatus(row.Status), DefinitionKey: row.DefinitionKey,
		ManifestHash: row.ManifestHash, Now: row.Now,
	}
	if err := json.Unmarshal(row.FlowHold.Detail, &h.Rules); err != nil {
		return FlowHold{}, fmt.Errorf("decode hold: %w", err)
	}
	return h, nil
}

// FlowHoldsDue lists the runs whose debounce or throttle is due, by the
// database's clock, oldest first.
func (s *Store) FlowHoldsDue(ctx context.Context, max int) ([]RunKey, error) {
	rows, err := s.q.FlowHoldsDue(ctx, int32(max))
	if err != nil {
		return nil, fmt.Errorf("due holds: %w", err)
	}
	out := make([]RunKey, len(rows))
	for i, r := range rows {
		out[i] = RunKey{TenantID: r.TenantID, ID: r.RunID}
	}
	return out, nil
}

// FlowHoldsEnded forgets the holds of runs that ended while held and
// returns them.
func (s *Store) FlowHoldsEnded(ctx context.Context, max int) ([]RunKey, error) {
	rows, err := s.q.FlowHoldsEnded(ctx, int32(max))
	if err != nil {
		return nil, fmt.Errorf("ended holds: %w", err)
	}
	out := make([]RunKey, len(rows))
	for i, r := range rows {
		out[i] = RunKey{TenantID: r.TenantID, ID: r.RunID}
	}
	return out, nil
}

// FlowDebounce is a key's open debounce.
type FlowDebounce struct {
	RunID     uuid.UUID
	MaxAt     *time.Time
	Starts    int
	RunStatus engine.RunStatus
}

// FlowDebounceBegin opens a key's debounce for a run (replacing one whose
// run went).
func (s *Store) FlowDebounceBegin(ctx context.Context, tenantID uuid.UUID, k FlowKey, runID uuid.UUID, maxAt *time.Time) error {
	err := s.q.FlowDebounceInsert(ctx, queries.FlowDebounceInsertParams{TenantID: tenantID, Pool: k.Pool, Key: k.Key, RunID: runID, MaxAt: maxAt})
	if err != nil {
		return fmt.Errorf("open debounce: %w", err)
	}
	return nil
}

// FlowDebounceJoin records one more start in a key's open debounce and
// gives its pending run the new input; joined is false when the run is
// no longer pending.
func (s *Store) FlowDebounceJoin(ctx context.Context, tenantID uuid.UUID, k FlowKey, runID uuid.UUID, input any) (bool, error) {
	raw, err := jsonvalue.Marshal(input)
	if err != nil {
		return false, fmt.Errorf("encode run input: %w", err)
	}
	n, err := s.q.FlowRunInputReplace(ctx, queries.FlowRunInputReplaceParams{TenantID: tenantID, RunID: runID, Input: raw})
	if err != nil || n == 0 {
		return false, err
	}
	return true, s.q.FlowDebounceTouch(ctx, queries.FlowDebounceTouchParams{TenantID: tenantID, Pool: k.Pool, Key: k.Key})
}

// FlowDebounceOf returns the key of a run's open debounce; found is false
// when it has none.
func (s *Store) FlowDebounceOf(ctx context.Context, tenantID, runID uuid.UUID) (FlowKey, bool, error) {
	row, err := s.q.FlowDebounceOfRun(ctx, queries.FlowDebounceOfRunParams{TenantID: tenantID, RunID: runID})
	if errors.Is(err, pgx.ErrNoRows) {
		return FlowKey{}, false, nil
	}
	if err != nil {
		return FlowKey{}, false, fmt.Errorf("debounce of run: %w", err)
	}
	return FlowKey{Pool: row.Pool, Key: row.Key}, true, nil
}

// FlowDebounceClose closes the debounce of a run.
func (s *Store) FlowDebounceClose(ctx context.Context, tenantID, runID uuid.UUID) error {
	if err := s.q.FlowDebounceClose(ctx, queries.FlowDebounceCloseParams{TenantID: tenantID, RunID: runID}); err != nil {
		return fmt.Errorf("close debounce: %w", err)
	}
	return nil
}

// FlowStartAdd counts a start of a key at at, for period.
func (s *Store) FlowStartAdd(ctx context.Context, tenantID uuid.UUID, k FlowKey, at time.Time, runID uuid.UUID, period time.Duration) error {
	err := s.q.FlowStartInsert(ctx, queries.FlowStartInsertParams{TenantID: tenantID, Pool: k.Pool, Key: k.Key, At: at, RunID: runID, ExpiresAt: at.Add(period)})
	if err != nil {
		return fmt.Errorf("count start: %w", err)
	}
	return nil
}

// FlowSweep forgets what counts no more: the slots of ended runs and the
// starts past their period. It returns the larger number of rows.
func (s *Store) FlowSweep(ctx context.Context, max int) (int, error) {
	slots, err := s.q.FlowSlotsSweep(ctx, int32(max))
	if err != nil {
		return 0, fmt.Errorf("sweep slots: %w", err)
	}
	starts, err := s.q.FlowStartsSweep(ctx, int32(max))
	if err != nil {
		return 0, fmt.Errorf("sweep starts: %w", err)
	}
	return int(max64(slots, starts)), nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
