package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/queries"
)

// BridgeTask is one attempt of a task step that a bridge-SDK worker runs
// over the API.
type BridgeTask struct {
	TenantID, RunID     uuid.UUID
	Node                string
	Generation, Attempt int
	ID                  uuid.UUID
	Queue, Handler      string
	Input               json.RawMessage
	IdempotencyKey      string
	Timeout             time.Duration // 0: none
	// Trace is the run's span, the parent of the attempt's.
	Trace     *engine.TraceContext
	CreatedAt time.Time
	// ScheduleToStart is how long it may wait for a worker to claim it
	// (0: forever); StartBy is that instant by the database's clock.
	ScheduleToStart time.Duration
	StartBy         *time.Time
	// FlowKey is the key of the step's concurrency pool, if any.
	FlowKey string
	// Secrets names the tenant secrets the worker receives with the task
	// (the step's `secrets`); the values are never stored.
	Secrets []string
	// Set once a worker claimed it.
	WorkerID, Token string
	ClaimedAt       *time.Time
	Deadline        *time.Time
	LeaseUntil      *time.Time
}

// BridgeLease is how long a claim holds without a heartbeat, and how long
// past its deadline an attempt may still answer.
type BridgeLease struct {
	Lease, Grace time.Duration
}

// until is the lease a claim or heartbeat made at now gets, as a duration.
func (l BridgeLease) until(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return l.Lease
	}
	return min(l.Lease, timeout+l.Grace)
}

// BridgeTasksInsert stores tasks for bridge workers; one already stored
// for the same attempt is left as it is.
func (s *Store) BridgeTasksInsert(ctx context.Context, tasks []BridgeTask) error {
	var p queries.BridgeTaskInsertManyParams
	for _, t := range tasks {
		p.TenantIds = append(p.TenantIds, t.TenantID)
		p.RunIds = append(p.RunIds, t.RunID)
		p.Nodes = append(p.Nodes, t.Node)
		p.Generations = append(p.Generations, int32(t.Generation))
		p.Attempts = append(p.Attempts, int32(t.Attempt))
		p.Queues = append(p.Queues, t.Queue)
		p.Handlers = append(p.Handlers, t.Handler)
		p.Inputs = append(p.Inputs, jsonOrNull(t.Input))
		p.IdempotencyKeys = append(p.IdempotencyKeys, t.IdempotencyKey)
		p.TimeoutMs = append(p.TimeoutMs, t.Timeout.Milliseconds())
		var tc engine.TraceContext
		if t.Trace != nil {
			tc = *t.Trace
		}
		p.Traceparents = append(p.Traceparents, tc.Parent)
		p.Tracestates = append(p.Tracestates, tc.State)
		p.ScheduleToStartMs = append(p.ScheduleToStartMs, t.ScheduleToStart.Milliseconds())
		p.FlowKeys = append(p.FlowKeys, t.FlowKey)
		names, err := json.Marshal(orNoNames(t.Secrets))
		if err != nil {
			return fmt.Errorf("encode secrets of %s: %w", t.Node, err)
		}
		p.Secrets = append(p.Secrets, names)
	}
	if err := s.q.BridgeTaskInsertMany(ctx, p); err != nil {
		return fmt.Errorf("insert %d bridge tasks: %w", len(tasks), err)
	}
	return nil
}

func orNoNames(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}

func jsonOrNull(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}

// BridgeTaskClaim is what a poll asks for.
type BridgeTaskClaim struct {
	TenantID uuid.UUID
	Queue    string
	Handlers []string
	WorkerID string
	Max      int
}

// BridgeTasksClaim claims up to c.Max waiting tasks, oldest first, and
// leases each one's attempt in run_attempt too. It must run in a
// transaction: both leases are taken at the same now(). A task whose
// attempt already has a result (it was cancelled) is deleted instead.
func (s *Store) BridgeTasksClaim(ctx context.Context, c BridgeTaskClaim, l BridgeLease) ([]BridgeTask, error) {
	rows, err := s.q.BridgeTaskClaim(ctx, queries.BridgeTaskClaimParams{
		WorkerID: pgtype.Text{String: c.WorkerID, Valid: true}, LeaseSeconds: l.Lease.Seconds(), GraceSeconds: l.Grace.Seconds(),
		TenantID: c.TenantID, Queue: c.Queue, Handlers: c.Handlers, MaxRows: int32(c.Max),
	})
	if err != nil {
		return nil, fmt.Errorf("claim bridge tasks: %w", err)
	}
	out := make([]BridgeTask, 0, len(rows))
	for _, r := range rows {
		t := bridgeTaskFromRow(r)
		k := AttemptKey{Run: RunKey{t.TenantID, t.RunID}, Node: t.Node, Generation: t.Generation, Attempt: t.Attempt}
		taken, err := s.AttemptStartMany(ctx, []AttemptTake{{Key: k, Lease: l.until(t.Timeout), Input: t.keptInput(), StepType: "task"}}, c.WorkerID)
		if err != nil {
			return nil, err
		}
		if taken[k] != Taken {
			if err := s.BridgeTaskDelete(ctx, t.TenantID, t.ID); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// BridgeTaskLock returns the tenant's task locked for update, and whether
// its claim's lease still holds by the database's clock. Another tenant's
// task is not found.
func (s *Store) BridgeTaskLock(ctx context.Context, tenantID, id uuid.UUID) (BridgeTask, bool, error) {
	r, err := s.q.BridgeTaskGetForUpdate(ctx, queries.BridgeTaskGetForUpdateParams{TenantID: tenantID, ID: id})
	if err != nil {
		return BridgeTask{}, false, notFound(err, "task")
	}
	return bridgeTaskFromRow(r.BridgeTask), r.Live, nil
}

// BridgeTaskExtend moves a claimed task's lease and its attempt's, and
// returns the new lease. It is [ErrTaskLeaseLost] when the attempt is no
// longer leased: it was reported lost or already has a result.
func (s *Store) BridgeTaskExtend(ctx context.Context, t BridgeTask, l BridgeLease) (time.Time, error) {
	until, err := s.q.BridgeTaskExtend(ctx, queries.BridgeTaskExtendParams{
		LeaseSeconds: l.Lease.Seconds(), GraceSeconds: l.Grace.Seconds(), TenantID: t.TenantID, ID: t.ID,
	})
	if err != nil {
		return time.Time{}, notFound(err, "task")
	}
	n, err := s.q.RunAttemptExtendLease(ctx, queries.RunAttemptExtendLeaseParams{
		LeaseUntil: until, TenantID: t.TenantID, RunID: t.RunID, Node: t.Node,
		Generation: int32(t.Generation), Attempt: int32(t.Attempt),
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("extend attempt lease: %w", err)
	}
	if n == 0 || until == nil {
		return time.Time{}, ErrTaskLeaseLost
	}
	return *until, nil
}

// BridgeTaskDelete removes a task once its result is delivered.
func (s *Store) BridgeTaskDelete(ctx context.Context, tenantID, id uuid.UUID) error {
	if err := s.q.BridgeTaskDelete(ctx, queries.BridgeTaskDeleteParams{TenantID: tenantID, ID: id}); err != nil {
		return fmt.Errorf("delete bridge task: %w", err)
	}
	return nil
}

// BridgeTaskDeleteAttempt removes the task of an attempt, claimed or not:
// the attempt was cancelled, so a worker holding it hears 409 next.
func (s *Store) BridgeTaskDeleteAttempt(ctx context.Context, tenantID, runID uuid.UUID, node string, generation, attempt int) error {
	err := s.q.BridgeTaskDeleteAttempt(ctx, queries.BridgeTaskDeleteAttemptParams{
		TenantID: tenantID, RunID: runID, Node: node, Generation: int32(generation), Attempt: int32(attempt),
	})
	if err != nil {
		return fmt.Errorf("delete bridge task of attempt: %w", err)
	}
	return nil
}

// BridgeTasksDeleteExpired removes up to limit claims whose lease ran out
// more than keep ago, and returns how many.
func (s *Store) BridgeTasksDeleteExpired(ctx context.Context, keep time.Duration, limit int) (int, error) {
	n, err := s.q.BridgeTaskDeleteExpired(ctx, queries.BridgeTaskDeleteExpiredParams{KeepSeconds: keep.Seconds(), MaxRows: int32(limit)})
	if err != nil {
		return 0, fmt.Errorf("delete expired bridge tasks: %w", err)
	}
	return int(n), nil
}

// ErrTaskLeaseLost is the conflict answered for a wrong or expired token.
var ErrTaskLeaseLost = apperr.New(apperr.Conflict, "the task's token is wrong or its lease has expired")

func bridgeTaskFromRow(r queries.BridgeTask) BridgeTask {
	var tc *engine.TraceContext
	if r.Traceparent.Valid {
		tc = &engine.TraceContext{Parent: r.Traceparent.String, State: r.Tracestate.String}
	}
	return BridgeTask{
		Trace: tc, CreatedAt: r.CreatedAt,
		TenantID: r.TenantID, RunID: r.RunID, Node: r.Node, Generation: int(r.Generation), Attempt: int(r.Attempt),
		ID: r.ID, Queue: r.Queue, Handler: r.Handler, Input: r.Input, IdempotencyKey: r.IdempotencyKey,
		Timeout: time.Duration(r.TimeoutMs) * time.Millisecond, WorkerID: r.WorkerID.String, Token: r.Token.String,
		ClaimedAt: r.ClaimedAt, Deadline: r.Deadline, LeaseUntil: r.LeaseUntil,
		ScheduleToStart: time.Duration(r.ScheduleToStartMs) * time.Millisecond, StartBy: r.StartBy,
		Secrets: secretNames(r.Secrets),
	}
}

// secretNames decodes a bridge task's secrets column; a value that is not
// a list of names is none.
func secretNames(raw []byte) []string {
	var names []string
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &names)
	}
	return names
}

// UnstartedTask is a bridge task no worker claimed in time.
type UnstartedTask struct {
	TenantID, RunID     uuid.UUID
	Node                string
	Generation, Attempt int
	Queue, Handler      string
	ScheduleToStart     time.Duration
}

// BridgeTasksClaimUnstarted removes and returns up to limit tasks that no
// worker claimed by their start_by, by the database's clock.
func (s *Store) BridgeTasksClaimUnstarted(ctx context.Context, limit int) ([]UnstartedTask, error) {
	rows, err := s.q.BridgeTaskClaimUnstarted(ctx, int32(limit))
	if err != nil {
		return nil, fmt.Errorf("claim unstarted bridge tasks: %w", err)
	}
	out := make([]UnstartedTask, len(rows))
	for i, r := range rows {
		out[i] = UnstartedTask{
			TenantID: r.TenantID, RunID: r.RunID, Node: r.Node, Generation: int(r.Generation), Attempt: int(r.Attempt),
			Queue: r.Queue, Handler: r.Handler, ScheduleToStart: time.Duration(r.ScheduleToStartMs) * time.Millisecond,
		}
	}
	return out, nil
}

// WorkerWait is a run's task attempt waiting for a worker to claim it.
type WorkerWait struct {
	Node                string
	Generation, Attempt int
	Queue, Handler      string
	Since               time.Time
	StartBy             *time.Time
}

// BridgeTasksUnclaimed lists the tasks of the run's nodes that no worker
// holds, by node.
func (s *Store) BridgeTasksUnclaimed(ctx context.Context, tenantID, runID uuid.UUID, nodes []string) (map[string]WorkerWait, error) {
	rows, err := s.q.BridgeTaskListUnclaimed(ctx, queries.BridgeTaskListUnclaimedParams{TenantID: tenantID, RunID: runID, Nodes: nodes})
	if err != nil {
		return nil, fmt.Errorf("list unclaimed tasks: %w", err)
	}
	out := make(map[string]WorkerWait, len(rows))
	for _, r := range rows {
		out[r.Node] = WorkerWait{
			Node: r.Node, Generation: int(r.Generation), Attempt: int(r.Attempt), Queue: r.Queue, Handler: r.Handler,
			Since: r.CreatedAt, StartBy: r.StartBy,
		}
	}
	return out, nil
}

// maxBridgeKeptInput bounds the input a bridge task's attempt keeps for
// the inspector, as shell's maxKeptInput does a step worker's.
const maxBridgeKeptInput = 256 << 10

// keptInput is what the task's attempt keeps as its input: its handler
// and the input the worker receives; nil when too large to keep.
func (t BridgeTask) keptInput() []byte {
	b, err := json.Marshal(map[string]any{"handler": t.Handler, "input": t.Input})
	if err != nil || len(b) > maxBridgeKeptInput {
		return nil
	}
	return b
}
