package workers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
)

// Queue names.
const (
	QueueCoordinator      = "coordinator"
	QueueStepsInteractive = "steps_interactive"
	QueueStepsStandard    = "steps_standard"
	QueueStepsBulk        = "steps_bulk"
)

// Options selects what a client works and how much of it at once.
type Options struct {
	// Coordinator and Steps choose the queues this process works. With
	// neither, the client only inserts jobs.
	Coordinator bool
	Steps       bool
	// MaxWorkers bounds concurrent jobs on the coordinator queue (default
	// 16); each tier's step queue gets a multiple of it (TierWeights).
	// Step workers hold a connection only inside the grouped statements,
	// so many of them share a few connections.
	MaxWorkers int
	Logger     *slog.Logger
	// Runtime is what the workers drive. Executor runs step attempts
	// (required with Steps); the runtime's Config.LocalHandlers should be
	// its Handles.
	Runtime  *Runtime
	Executor *steps.Executor
}

// NewClient builds the River client that works Ductor's queues over pool,
// with its tuning. (The runtime inserts with a client of its own.)
func NewClient(pool *pgxpool.Pool, opts Options) (*river.Client[pgx.Tx], error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cfg := insertConfig(opts.Logger)
	if opts.Coordinator || opts.Steps {
		cfg.Workers = register(opts)
		cfg.Queues = queues(opts)
	}
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
}

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

func register(opts Options) *river.Workers {
	workers := river.NewWorkers()
	river.AddWorker(workers, &NoopWorker{})
	if opts.Coordinator {
		river.AddWorker(workers, &TickWorker{C: opts.Runtime.Ticker})
	}
	if opts.Steps {
		river.AddWorker(workers, &StepWorker{C: opts.Runtime, Executor: opts.Executor})
	}
	return workers
}

func queues(opts Options) map[string]river.QueueConfig {
	max := opts.MaxWorkers
	if max <= 0 {
		max = 16
	}
	fast := func(n int) river.QueueConfig {
		return river.QueueConfig{MaxWorkers: n, FetchCooldown: 2 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond}
	}
	q := map[string]river.QueueConfig{}
	if opts.Coordinator {
		q[QueueCoordinator] = fast(max)
	}
	if opts.Steps {
		for tier, weight := range TierWeights {
			q[stepQueue(tier)] = fast(2 * weight * max)
			q[sparseLane(stepQueue(tier))] = fast(2 * weight * max)
		}
		q[river.QueueDefault] = fast(max)
	}
	return q
}

// TierWeights are the tiers' shares of a process's step workers: each
// tier's queue has 2 × weight × MaxWorkers workers of its own (128, 64
// and 32 by default), which it never lends, so a saturated tier cannot
// slow another down; its sparse lane (sparseLane) has as many again.
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

// NoopArgs is a job that does nothing: River's raw rate, measured with it,
// is the baseline Ductor's benchmarks report their ratios against.
type NoopArgs struct{}

// Kind implements river.JobArgs.
func (NoopArgs) Kind() string { return "ductor.noop" }

// NoopWorker completes NoopArgs jobs.
type NoopWorker struct {
	river.WorkerDefaults[NoopArgs]
}

// Work does nothing.
func (*NoopWorker) Work(context.Context, *river.Job[NoopArgs]) error { return nil }
