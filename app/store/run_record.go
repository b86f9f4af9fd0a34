package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// RunHistory returns a run's transitions after seq, oldest first.
func (s *Store) RunHistory(ctx context.Context, tenantID, runID uuid.UUID, afterSeq int64, limit int) ([]engine.Transition, error) {
	rows, err := s.q.RunHistoryList(ctx, queries.RunHistoryListParams{
		TenantID: tenantID, RunID: runID, AfterSeq: afterSeq, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, fmt.Errorf("load history: %w", err)
	}
	out := make([]engine.Transition, len(rows))
	for i, r := range rows {
		out[i] = engine.Transition{
			Seq: r.Seq, At: r.At, Node: r.Node, From: r.FromState, To: r.ToState,
			Generation: int(r.Generation), Attempt: int(r.Attempt), Detail: r.Detail,
		}
	}
	return out, nil
}

// AttemptRecord is one stored attempt, with its worker lease and the
// worker that took it (empty for attempts no worker ran).
type AttemptRecord struct {
	engine.Attempt
	LeaseUntil *time.Time
	Worker     string
	// Input is what the attempt was started with: its step's settings as
	// the tick evaluated them (nil when not kept).
	Input any
}

// RunAttempts lists a run's attempts by node, generation and attempt.
func (s *Store) RunAttempts(ctx context.Context, tenantID, runID uuid.UUID) ([]AttemptRecord, error) {
	rows, err := s.q.RunAttemptList(ctx, queries.RunAttemptListParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("load attempts: %w", err)
	}
	return attemptRecords(rows), nil
}

// RunAttemptsOf lists the attempts of some of a run's nodes by node,
// generation and attempt.
func (s *Store) RunAttemptsOf(ctx context.Context, tenantID, runID uuid.UUID, nodes []string) ([]AttemptRecord, error) {
	rows, err := s.q.RunAttemptListNodes(ctx, queries.RunAttemptListNodesParams{TenantID: tenantID, RunID: runID, Nodes: nodes})
	if err != nil {
		return nil, fmt.Errorf("load attempts: %w", err)
	}
	return attemptRecords(rows), nil
}

func attemptRecords(rows []queries.RunAttempt) []AttemptRecord {
	out := make([]AttemptRecord, len(rows))
	for i, r := range rows {
		a := AttemptRecord{Attempt: engine.Attempt{Node: r.Node, Generation: int(r.Generation), Attempt: int(r.Attempt)},
			LeaseUntil: r.LeaseUntil, Worker: r.Worker.String}
		if r.StartedAt != nil {
			a.StartedAt = *r.StartedAt
		}
		if r.FinishedAt != nil {
			a.FinishedAt = *r.FinishedAt
		}
		if len(r.Output) > 0 {
			_ = jsonvalue.Unmarshal(r.Output, &a.Output)
		}
		if len(r.Input) > 0 {
			_ = jsonvalue.Unmarshal(r.Input, &a.Input)
		}
		if len(r.Error) > 0 {
			a.Error = &engine.Error{}
			_ = jsonvalue.Unmarshal(r.Error, a.Error)
		}
		out[i] = a
	}
	return out
}

// AttemptStart records that a worker took an attempt and leases it for
// lease; it reports false when the attempt already has a result.
func (s *Store) AttemptStart(ctx context.Context, tenantID, runID uuid.UUID, node string, generation, attempt int, lease time.Duration) (bool, error) {
	a := AttemptTake{Key: AttemptKey{Run: RunKey{tenantID, runID}, Node: node, Generation: generation, Attempt: attempt}, Lease: lease}
	taken, err := s.AttemptStartMany(ctx, []AttemptTake{a}, "")
	return taken[a.Key] == Taken, err
}

// AttemptKey names one attempt of a step.
type AttemptKey struct {
	Run                 RunKey
	Node                string
	Generation, Attempt int
}

// AttemptTake is a worker taking an attempt: leased for Lease from the
// start, and only before By (the database's clock; zero: any time).
type AttemptTake struct {
	Key   AttemptKey
	Lease time.Duration
	By    time.Time
	// Input is the attempt's evaluated settings as JSON (nil: not kept),
	// kept with its first start.
	Input []byte
	// StepType is the step type the attempt executes ("": not known).
	StepType string
}

// TakeOutcome is what became of an AttemptTake.
type TakeOutcome int

const (
	// Taken: the start is recorded and the worker executes the attempt.
	Taken TakeOutcome = iota
	// Finished: the attempt already has a result (a duplicate delivery).
	Finished
	// TooLate: the start came at or after By; nothing is recorded.
	TooLate
)

// AttemptStartMany records that worker took attempts and reports what
// became of each (see TakeOutcome); an attempt whose run is gone (pruned)
// counts as Finished. An attempt may appear more than once; the first
// take counts.
func (s *Store) AttemptStartMany(ctx context.Context, takes []AttemptTake, worker string) (map[AttemptKey]TakeOutcome, error) {
	p := queries.RunAttemptStartManyParams{Worker: worker}
	var keys attemptColumns
	seen := map[AttemptKey]bool{}
	for _, t := range takes {
		k := t.Key
		if seen[k] {
			continue
		}
		seen[k] = true
		keys.add(k)
		p.LeaseSeconds = append(p.LeaseSeconds, t.Lease.Seconds())
		p.StartBys = append(p.StartBys, t.By)
		p.Inputs = append(p.Inputs, string(t.Input))
		p.StepTypes = append(p.StepTypes, t.StepType)
	}
	p.TenantIds, p.RunIds, p.Nodes, p.Generations, p.Attempts = keys.tenants, keys.runs, keys.nodes, keys.generations, keys.attempts
	rows, err := s.q.RunAttemptStartMany(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("start attempts: %w", err)
	}
	out := make(map[AttemptKey]TakeOutcome, len(rows))
	for _, r := range rows {
		k := AttemptKey{RunKey{r.TenantID, r.RunID}, r.Node, int(r.Generation), int(r.Attempt)}
		switch {
		case !r.InTime:
			out[k] = TooLate
		case r.Taken:
			out[k] = Taken
		default:
			out[k] = Finished
		}
	}
	return out, nil
}

// attemptColumns are attempt keys as the arrays the statements on
// several attempts unnest.
type attemptColumns struct {
	tenants, runs         []uuid.UUID
	nodes                 []string
	generations, attempts []int32
}

func (c *attemptColumns) add(k AttemptKey) {
	c.tenants = append(c.tenants, k.Run.TenantID)
	c.runs = append(c.runs, k.Run.ID)
	c.nodes = append(c.nodes, k.Node)
	c.generations = append(c.generations, int32(k.Generation))
	c.attempts = append(c.attempts, int32(k.Attempt))
}

// AttemptRenewHeld gives those of takes' attempts that worker holds
// (started by it, leased, no result) a new lease of their take's length,
// and tells which they are.
func (s *Store) AttemptRenewHeld(ctx context.Context, takes []AttemptTake, worker string) (map[AttemptKey]bool, error) {
	var keys attemptColumns
	leases := make([]float64, len(takes))
	for i, t := range takes {
		keys.add(t.Key)
		leases[i] = t.Lease.Seconds()
	}
	rows, err := s.q.RunAttemptRenewHeld(ctx, queries.RunAttemptRenewHeldParams{
		TenantIds: keys.tenants, RunIds: keys.runs, Nodes: keys.nodes, Generations: keys.generations, Attempts: keys.attempts,
		LeaseSeconds: leases, Worker: worker,
	})
	if err != nil {
		return nil, fmt.Errorf("renew held attempts: %w", err)
	}
	out := make(map[AttemptKey]bool, len(rows))
	for _, r := range rows {
		out[AttemptKey{RunKey{r.TenantID, r.RunID}, r.Node, int(r.Generation), int(r.Attempt)}] = true
	}
	return out, nil
}

// LostAttempt names an attempt whose worker's lease ran out.
type LostAttempt struct {
	TenantID, RunID     uuid.UUID
	Node                string
	Generation, Attempt int
}

// AttemptsClaimLost claims up to limit attempts whose lease ran out.
func (s *Store) AttemptsClaimLost(ctx context.Context, limit int) ([]LostAttempt, error) {
	rows, err := s.q.RunAttemptClaimLost(ctx, int32(limit))
	if err != nil {
		return nil, fmt.Errorf("claim lost attempts: %w", err)
	}
	out := make([]LostAttempt, len(rows))
	for i, r := range rows {
		out[i] = LostAttempt{TenantID: r.TenantID, RunID: r.RunID, Node: r.Node, Generation: int(r.Generation), Attempt: int(r.Attempt)}
	}
	return out, nil
}

// Timer is a durable timer row.
type Timer struct {
	TenantID, RunID uuid.UUID
	TimerID, Node   string
	FireAt          time.Time
}

// TimerSchedule inserts or moves a timer.
func (s *Store) TimerSchedule(ctx context.Context, t Timer) error {
	err := s.q.RunTimerUpsert(ctx, queries.RunTimerUpsertParams{
		TenantID: t.TenantID, RunID: t.RunID, TimerID: t.TimerID, Node: t.Node, FireAt: t.FireAt,
	})
	if err != nil {
		return fmt.Errorf("schedule timer: %w", err)
	}
	return nil
}

// TimerCancel deletes a timer.
func (s *Store) TimerCancel(ctx context.Context, tenantID, runID uuid.UUID, timerID string) error {
	if err := s.q.RunTimerDelete(ctx, queries.RunTimerDeleteParams{TenantID: tenantID, RunID: runID, TimerID: timerID}); err != nil {
		return fmt.Errorf("cancel timer: %w", err)
	}
	return nil
}

// TimersClaimDue removes and returns up to limit due timers.
func (s *Store) TimersClaimDue(ctx context.Context, limit int) ([]Timer, error) {
	rows, err := s.q.RunTimerClaimDue(ctx, int32(limit))
	if err != nil {
		return nil, fmt.Errorf("claim due timers: %w", err)
	}
	out := make([]Timer, len(rows))
	for i, r := range rows {
		out[i] = Timer{TenantID: r.TenantID, RunID: r.RunID, TimerID: r.TimerID, Node: r.Node, FireAt: r.FireAt}
	}
	return out, nil
}

func jsonOrEmpty(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	if e, ok := v.(*engine.Error); ok && e == nil {
		return "", nil
	}
	b, err := jsonvalue.Marshal(v)
	return string(b), err
}

// Dispatch is a step job waiting for its retry backoff.
type Dispatch struct {
	TenantID, RunID     uuid.UUID
	Node                string
	Generation, Attempt int
	FireAt              time.Time
	Queue               string
	Args                []byte
}

// DispatchDelay stores a step job to enqueue at d.FireAt.
func (s *Store) DispatchDelay(ctx context.Context, d Dispatch) error {
	err := s.q.RunDispatchInsert(ctx, queries.RunDispatchInsertParams{
		TenantID: d.TenantID, RunID: d.RunID, Node: d.Node, Generation: int32(d.Generation),
		Attempt: int32(d.Attempt), FireAt: d.FireAt, Queue: d.Queue, Args: d.Args,
	})
	if err != nil {
		return fmt.Errorf("delay dispatch: %w", err)
	}
	return nil
}

// DispatchCancel drops an attempt's stored dispatch, if it is still
// waiting for its backoff.
func (s *Store) DispatchCancel(ctx context.Context, tenantID, runID uuid.UUID, node string, generation, attempt int) error {
	err := s.q.RunDispatchDelete(ctx, queries.RunDispatchDeleteParams{
		TenantID: tenantID, RunID: runID, Node: node, Generation: int32(generation), Attempt: int32(attempt),
	})
	if err != nil {
		return fmt.Errorf("cancel dispatch: %w", err)
	}
	return nil
}

// DispatchesClaimDue removes and returns up to limit due dispatches.
func (s *Store) DispatchesClaimDue(ctx context.Context, limit int) ([]Dispatch, error) {
	rows, err := s.q.RunDispatchClaimDue(ctx, int32(limit))
	if err != nil {
		return nil, fmt.Errorf("claim due dispatches: %w", err)
	}
	out := make([]Dispatch, len(rows))
	for i, r := range rows {
		out[i] = Dispatch{Queue: r.Queue, Args: r.Args}
	}
	return out, nil
}

// RunHistoryFirstFailure is the seq of the run's first transition into
// failed, 0 when it has none.
func (s *Store) RunHistoryFirstFailure(ctx context.Context, tenantID, runID uuid.UUID) (int64, error) {
	seq, err := s.q.RunHistoryFirstFailure(ctx, queries.RunHistoryFirstFailureParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return 0, fmt.Errorf("find the run's first failure: %w", err)
	}
	return seq, nil
}
