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

	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
)

// Options selects what a client works and how much of it at once.
type Options struct {
	// Coordinator and Steps choose the queues this process works. With
	// neither, the client only inserts jobs.
	Coordinator bool
	Steps       bool
	// MaxWorkers bounds concurrent jobs on the coordinator queue (default
	// 16); each tier's step queue gets a multiple of it (shell.TierWeights).
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
	cfg := shell.InsertConfig(opts.Logger)
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

func register(opts Options) *river.Workers {
	workers := river.NewWorkers()
	river.AddWorker(workers, &NoopWorker{})
	if opts.Coordinator {
		river.AddWorker(workers, &TickWorker{C: opts.Runtime.Ticker})
	}
	if opts.Steps {
		river.AddWorker(workers, &StepWorker{C: opts.Runtime.Steps, Executor: opts.Executor})
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
		q[shell.QueueCoordinator] = fast(max)
	}
	if opts.Steps {
		for tier, weight := range shell.TierWeights {
			q[shell.StepQueue(tier)] = fast(2 * weight * max)
			q[shell.SparseLane(shell.StepQueue(tier))] = fast(2 * weight * max)
		}
		q[river.QueueDefault] = fast(max)
	}
	return q
}

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
