package workers

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/telemetry"
	"github.com/ductor/ductor/app/usage"
)

// Config is what a process's runtime is built from, once, by New: the
// shell's settings and the runs service's. No field is read again after
// New returns, and nothing is set later.
type Config struct {
	Pool *pgxpool.Pool
	// Logger is slog.Default when nil.
	Logger *slog.Logger
	// Tracing exports spans of runs and steps (telemetry.Disabled when nil).
	Tracing *telemetry.Tracing
	// LocalHandlers tells which task handlers this deployment's step
	// workers run (an Executor's Handles); see shell.Config.
	LocalHandlers func(handler string) bool
	// TaskLease is a bridge task claim's lease and grace (zero: the
	// defaults); see runs.Config.
	TaskLease store.BridgeLease
	// MaxBufferedSignals bounds a run's unconsumed signals (0: the
	// engine's default).
	MaxBufferedSignals int
	// RescueWindow, NoInlineTicks, InlineBudget and StepBatchMax: see
	// shell.Config.
	RescueWindow  time.Duration
	NoInlineTicks bool
	InlineBudget  time.Duration
	StepBatchMax  int
	// LocalSteps, when set, runs the task and http steps this process's
	// ticks dispatch right here, without a River job, up to LocalSlots at
	// once (0: shell.DefaultLocalSlots); see shell's package doc, "Local
	// steps". Set it only in a process that also works the step queues
	// (its Executor is the step workers'); nil sends every step through
	// River.
	LocalSteps *steps.Executor
	LocalSlots int
	// BatchQueueMax: see runs.Config.
	BatchQueueMax int
	// Subscriptions configures outbound webhook subscriptions (Pool and
	// Logger are the runtime's); see subscriptions.Config.
	Subscriptions subscriptions.Config
	// Usage is the metering and quota service's settings (its Pool and
	// Logger are the runtime's).
	Usage usage.Config
	// Testing holds what only tests and benchmarks set.
	Testing shell.Testing
}

// Runtime is one process's layers, built once from a Config by New and
// wired to each other: the shell's (unit of work, tick loop, sweep,
// instruments, step workers' shared parts) and the runs service the API
// and CLI call. Its fields are the layers themselves.
type Runtime struct {
	*shell.Shell
	Runs *runs.Service
	// Subscriptions sends events to outbound webhooks.
	Subscriptions *subscriptions.Service
	// Usage meters tenants and holds their quotas.
	Usage *usage.Service
}

// New builds a process's runtime.
func New(cfg Config) (*Runtime, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Tracing == nil {
		cfg.Tracing = telemetry.Disabled()
	}
	var local shell.LocalSteps
	if cfg.LocalSteps != nil {
		local = shell.LocalSteps{Run: localRun(cfg.LocalSteps), Slots: cfg.LocalSlots}
	}
	sh, err := shell.New(shell.Config{
		Pool: cfg.Pool, Logger: cfg.Logger, Tracing: cfg.Tracing, LocalHandlers: cfg.LocalHandlers,
		MaxBufferedSignals: cfg.MaxBufferedSignals, RescueWindow: cfg.RescueWindow, NoInlineTicks: cfg.NoInlineTicks,
		InlineBudget: cfg.InlineBudget, StepBatchMax: cfg.StepBatchMax, Local: local, Testing: cfg.Testing,
	})
	if err != nil {
		return nil, err
	}
	subCfg := cfg.Subscriptions
	subCfg.Pool, subCfg.Logger = cfg.Pool, cfg.Logger
	subs := subscriptions.New(subCfg)
	cfg.Usage.Pool, cfg.Usage.Logger = cfg.Pool, cfg.Logger
	meter := usage.New(cfg.Usage)
	svc := runs.New(runs.Config{
		Pool: cfg.Pool, Logger: cfg.Logger, Tracing: cfg.Tracing, Shell: sh,
		TaskLease: cfg.TaskLease, MaxBufferedSignals: cfg.MaxBufferedSignals, BatchQueueMax: cfg.BatchQueueMax,
		Outbound: subs.Outbound, Quota: meter,
	})
	return &Runtime{Shell: sh, Runs: svc, Subscriptions: subs, Usage: meter}, nil
}

// Collectors are the runtime's metrics for a Prometheus registry.
func (r *Runtime) Collectors() []prometheus.Collector {
	return append(append(append(r.Shell.Collectors(), r.Runs.Collectors()...), r.Subscriptions.Collectors()...), r.Usage.Collectors()...)
}

// Sweep works what comes due, every shell.SweepEvery until ctx ends:
// due timers, retries and lost attempts (Sweeper.SweepOnce, round again
// at once while a batch comes back full), a chunk of a bulk operation
// (runs.Batches.Once), the runs flow control held back whose time has
// come (Sweeper.FlowSweep), and the system events the unit of work
// stored (runs.Events.DispatchSystem). Every coordinator process runs it; SKIP
// come (Sweeper.FlowSweep), and the usage deltas to fold
// (usage.Service.FoldDue). Every coordinator process runs it; SKIP
// LOCKED lets replicas share the work, and the database's clock decides
// what is due. Alongside, it sends the subscriptions' deliveries
// (subscriptions.Service.Run) until ctx ends.
func (r *Runtime) Sweep(ctx context.Context) {
	t := time.NewTicker(shell.SweepEvery)
	defer t.Stop()
	var sending sync.WaitGroup
	defer sending.Wait()
	sending.Go(func() { r.Subscriptions.Run(ctx) })
	for {
		r.Sweeper.SweepAll(ctx)
		if _, err := r.Runs.Batches.Once(ctx); err != nil && ctx.Err() == nil {
			r.Runs.Log().ErrorContext(ctx, "batch", "err", err)
		}
		r.Sweeper.FlowSweep(ctx)
		if _, err := r.Runs.Events.DispatchSystem(ctx); err != nil && ctx.Err() == nil {
			r.Runs.Log().ErrorContext(ctx, "system events", "err", err)
		}
		r.Usage.FoldDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
