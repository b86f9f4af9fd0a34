package shell

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

// TickArgs is the coordinator tick of one run.
type TickArgs struct {
	TenantID uuid.UUID `json:"tenant_id"`
	RunID    uuid.UUID `json:"run_id"`
}

// Kind implements river.JobArgs.
func (TickArgs) Kind() string { return "ductor.tick" }

// InsertOpts puts ticks on the coordinator queue, ahead of step work.
func (TickArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueCoordinator, MaxAttempts: 25}
}

// StepArgs is one attempt of one worker step (task or http).
type StepArgs struct {
	TenantID       uuid.UUID `json:"tenant_id"`
	RunID          uuid.UUID `json:"run_id"`
	Node           string    `json:"node"`
	Ref            string    `json:"ref"`
	Type           string    `json:"type"`
	Generation     int       `json:"generation"`
	Attempt        int       `json:"attempt"`
	IdempotencyKey string    `json:"idempotency_key"`
	// Params encode and decode by the JSON value model, so that numbers
	// keep their kind through River's job arguments.
	Params    jsonvalue.Object `json:"params"`
	TimeoutMS int64            `json:"timeout_ms"`
	// ScheduleToStartMS is how long a task may wait for a worker to claim
	// it (the step's schedule_to_start, else the tenant's, else
	// DefaultScheduleToStart); unclaimed that long it fails as no_worker.
	ScheduleToStartMS int64 `json:"schedule_to_start_ms,omitempty"`
	// Sparse marks a step dispatched with nothing of its tenant queued
	// while other tenants had a backlog: it goes to its tier's sparse lane
	// and its start is recorded on its own, ahead of bulk work (see
	// yieldGate).
	Sparse bool `json:"sparse,omitempty"`
	// FlowKey is the key of the step's concurrency pool, FlowLimit how
	// many attempts of that key may be in flight at once (admitFlow).
	FlowKey   string `json:"flow_key,omitempty"`
	FlowLimit int    `json:"flow_limit,omitempty"`
	// PoolWait marks a step its pool held back, waiting in run_dispatch
	// for a slot (rather than for a retry's backoff).
	PoolWait bool `json:"pool_wait,omitempty"`
	// HeldUS is when its pool first held the step back (Unix
	// microseconds, the database's clock): its place in its key's line.
	HeldUS int64 `json:"held_us,omitempty"`
	// Trace is the run's span: the attempt's span is its child.
	Trace *engine.TraceContext `json:"trace,omitempty"`
	// More are the further steps of a step batch, carried by this one's
	// job (see packSteps); this step is the batch's first.
	More []StepArgs `json:"more,omitempty"`
}

// Kind implements river.JobArgs.
func (StepArgs) Kind() string { return "ductor.step" }

// members are the steps a step job carries: itself, then a batch's
// further steps.
func (a StepArgs) Members() []StepArgs {
	if len(a.More) == 0 {
		return []StepArgs{a}
	}
	head := a
	head.More = nil
	return append([]StepArgs{head}, a.More...)
}

func (a StepArgs) AttemptKey() store.AttemptKey {
	return store.AttemptKey{Run: store.RunKey{TenantID: a.TenantID, ID: a.RunID}, Node: a.Node, Generation: a.Generation, Attempt: a.Attempt}
}

// Queue names.
const (
	QueueCoordinator      = "coordinator"
	QueueStepsInteractive = "steps_interactive"
	QueueStepsStandard    = "steps_standard"
	QueueStepsBulk        = "steps_bulk"
)

// TierWeights are the tiers' shares of a process's step workers: each
// tier's queue has 2 × weight × MaxWorkers workers of its own (128, 64
// and 32 by default), which it never lends, so a saturated tier cannot
// slow another down; its sparse lane (SparseLane) has as many again.
// Workers wait for the database without holding a connection, so they
// are cheap.
var TierWeights = map[store.Tier]int{store.TierInteractive: 4, store.TierStandard: 2, store.TierBulk: 1}

// Notify wakes every client working queue from inside tx: the notification
// is delivered when tx commits, so the job the transaction inserted is
// fetched at once instead of at the next poll.
func Notify(ctx context.Context, tx pgx.Tx, queue string) error {
	_, err := tx.Exec(ctx, notifySQL, queue)
	if err != nil {
		return fmt.Errorf("notify queue %s: %w", queue, err)
	}
	return nil
}

// notifySQL wakes the clients working queue $1.
const notifySQL = `SELECT pg_notify(current_schema() || '.river_insert', json_build_object('queue', $1::text)::text)`

// reindexed is River's default list of indexes to rebuild, less the GIN
// indexes on job args and metadata that migration 0035 dropped.
func reindexed() []string {
	var names []string
	for _, n := range river.ReindexerIndexNamesDefault() {
		if n != "river_job_args_index" && n != "river_job_metadata_index" {
			names = append(names, n)
		}
	}
	return names
}

// newInserter is a River client that only inserts jobs (and cancels
// them), with Ductor's insert middleware.
func newInserter(pool *pgxpool.Pool, log *slog.Logger) (*river.Client[pgx.Tx], error) {
	client, err := river.NewClient(riverpgxv5.New(pool), InsertConfig(log))
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
}

// InsertConfig is the River configuration every client of Ductor's
// shares: how jobs are inserted and kept.
func InsertConfig(log *slog.Logger) *river.Config {
	return &river.Config{
		Logger:                      log,
		CompletedJobRetentionPeriod: time.Hour,
		JobTimeout:                  -1, // each worker sets its own
		MaxAttempts:                 25,
		Middleware:                  []rivertype.Middleware{&fairMiddleware{}, &readyMiddleware{}},
		// A coordinator-only process inserts step jobs it does not work
		// itself (roles split across replicas).
		SkipUnknownJobCheck: true,
		ReindexerIndexNames: reindexed(),
	}
}
