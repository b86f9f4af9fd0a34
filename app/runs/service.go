package runs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/telemetry"
)

// Config is what the runs service is built from, once, by New.
type Config struct {
	Pool *pgxpool.Pool
	// Logger is slog.Default when nil.
	Logger *slog.Logger
	// Tracing begins the spans of the runs it starts (telemetry.Disabled
	// when nil).
	Tracing *telemetry.Tracing
	// Shell is the layers below: the unit of work it writes through, the
	// tick loop its starts and results tick inline with, the instruments.
	Shell *shell.Shell
	// TaskLease is how long a bridge task's claim holds without a
	// heartbeat, and the grace past its deadline (zero: DefaultTaskLease
	// and DefaultTaskGrace).
	TaskLease store.BridgeLease
	// MaxBufferedSignals bounds a run's unconsumed signals (0:
	// engine.DefaultMaxBufferedSignals).
	MaxBufferedSignals int
	// BatchQueueMax bounds the runs a tenant's running batches may have
	// still to act on (Batches.Create): 0 is DefaultBatchQueueMax.
	BatchQueueMax int
	// Outbound receives every event in the transaction that publishes or
	// dispatches it (the subscriptions' deliveries are created there);
	// nil when nothing goes out.
	Outbound func(ctx context.Context, tx pgx.Tx, e store.Event) error
	// Quota admits each new run of a tenant, or refuses it with
	// apperr.QuotaExceeded (nil: no quotas); see package usage.
	Quota QuotaGate
}

// QuotaGate admits a tenant's new run against its quotas; limited says
// whether the tenant has any, so that a start checks again, exactly,
// inside the transaction that creates its run.
type QuotaGate interface {
	Admit(ctx context.Context, s *store.Store, tenantID uuid.UUID) (limited bool, err error)
}

// Defaults of a bridge task's claim.
const (
	// DefaultTaskLease is how long a claim holds without a heartbeat.
	DefaultTaskLease = 30 * time.Second
	// DefaultTaskGrace is how long past its deadline a claimed attempt
	// may still answer before it is reported lost.
	DefaultTaskGrace = 5 * time.Second
)

// deps are what the service's parts share.
type deps struct {
	Config
	pool     *pgxpool.Pool
	log      *slog.Logger
	tracing  *telemetry.Tracing
	w        *shell.Writer
	t        *shell.Ticker
	obs      *shell.Observer
	triggers *triggerMetrics
	schemas  sync.Map // manifest hash → *definition.InputValidator
	waiters  waiters
	lease    store.BridgeLease
}

// New builds the runs service over the shell of cfg.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Tracing == nil {
		cfg.Tracing = telemetry.Disabled()
	}
	lease := cfg.TaskLease
	if lease.Lease <= 0 {
		lease.Lease = DefaultTaskLease
	}
	if lease.Grace <= 0 {
		lease.Grace = DefaultTaskGrace
	}
	d := &deps{
		Config: cfg, pool: cfg.Pool, log: cfg.Logger, tracing: cfg.Tracing, lease: lease,
		w: cfg.Shell.Writer, t: cfg.Shell.Ticker, obs: cfg.Shell.Observer, triggers: newTriggerMetrics(),
	}
	return &Service{deps: d, Schedules: &Schedules{d}, Tasks: &Tasks{d}, Events: &Events{d}, Batches: &Batches{d}, Upgrades: &Upgrades{d}}
}

// admit asks the quota gate, if there is one, to let a tenant's new run
// start.
func (c *deps) admit(ctx context.Context, s *store.Store, tenantID uuid.UUID) (limited bool, err error) {
	if c.Quota == nil {
		return false, nil
	}
	return c.Quota.Admit(ctx, s, tenantID)
}

// Collectors are the service's metrics for a Prometheus registry:
// schedule actions, event triggers and webhook deliveries.
func (c *Service) Collectors() []prometheus.Collector { return c.triggers.collectors() }

// Log is the service's logger.
func (c *Service) Log() *slog.Logger { return c.log }

// Service is what the API and the CLI call on runs: start, signal,
// control, approvals and cases; and, through its parts, schedules,
// tasks, events and batches.
type Service struct {
	*deps

	Schedules *Schedules
	Tasks     *Tasks
	Events    *Events
	Batches   *Batches
	Upgrades  *Upgrades
}

// Schedules creates, changes and fires schedules.
type Schedules struct{ *deps }

// Tasks hands bridge tasks to remote workers and takes their results.
type Tasks struct{ *deps }

// Events publishes events to the runs waiting for them and starts the
// runs their triggers start.
type Events struct{ *deps }

// Batches are bulk operations on runs, worked a chunk at a time.
type Batches struct{ *deps }

// Manifest returns the compiled manifest a run executes.
func (c *Service) Manifest(ctx context.Context, r store.Run) (*definition.Manifest, error) {
	return c.w.Manifest(ctx, store.New(c.pool), r)
}
