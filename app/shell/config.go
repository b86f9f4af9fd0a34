package shell

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/telemetry"
)

// Config is what a process's runtime is built from, once, by New: no
// field is read again after it returns, and nothing is set later.
type Config struct {
	Pool   *pgxpool.Pool
	Logger *slog.Logger
	// Tracing exports spans of runs and steps (telemetry.Disabled when nil).
	Tracing *telemetry.Tracing
	// LocalHandlers tells which task handlers this deployment's step
	// workers run. A task step whose handler is not among them, or whose
	// queue is not `default`, becomes a bridge task that bridge-SDK
	// workers poll for. Nil: every task runs locally.
	LocalHandlers func(handler string) bool
	// MaxBufferedSignals bounds a run's unconsumed signals (0:
	// engine.DefaultMaxBufferedSignals).
	MaxBufferedSignals int
	// RescueWindow is added to a step's timeout to lease its attempt (0:
	// 30 s).
	RescueWindow time.Duration
	// NoInlineTicks stops step workers and triggers from running a free
	// run's tick in their own transaction: every tick is a tick job.
	NoInlineTicks bool
	// InlineBudget bounds the time the engine spends deciding one inline
	// tick (a trigger's, or a result group's for all its runs); 0 is
	// defaultInlineBudget. Inline ticks run on shared goroutines (the
	// result group's single flusher, the API's request): an expensive
	// decision is interrupted there and handed to the run's tick job,
	// which decides it with no budget but the expressions' own limits, on
	// a worker of its own.
	InlineBudget time.Duration
	// StepBatchMax bounds how many ready steps of one tenant one River job
	// carries (packSteps): 0 is DefaultStepBatchMax, 1 one step a job.
	StepBatchMax int
	// Local lets this process run the task and http steps its own ticks
	// dispatch, without a River job (see the package doc, "Local
	// steps"); its zero value runs every step through River.
	Local LocalSteps
	// BatchQueueMax bounds the runs a tenant's running batches may have
	// still to act on (CreateBatch): 0 is DefaultBatchQueueMax.
	BatchQueueMax int
	// Testing holds what only tests and benchmarks set.
	Testing Testing
}

// Testing are options that show what a guarantee is for by taking it
// away, or that make a failure happen at a chosen point. Production code
// never sets them.
type Testing struct {
	// PlainFIFO, while true, turns the fair queue's tags off: step jobs
	// are fetched in insertion order (the fairness benchmark's baseline,
	// which it switches on and off between floods).
	PlainFIFO *atomic.Bool
	// TickLoadOptions are the store options a tick loads its runs with
	// (the concurrency checker's store.SameStatementTickLoad shows the
	// lost updates the old load allowed).
	TickLoadOptions []store.Option
	// Fault, when set, is called at each named point of a tick; an error
	// aborts the tick there, as a crash would.
	Fault func(point string) error
	// FaultTx, when set, is called inside the transaction of each named
	// point of a write; an error aborts the write there, as a failed
	// statement would.
	FaultTx func(ctx context.Context, tx pgx.Tx, point string) error
	// UnguardedUpgrades makes an upgrade (app/runs) read the run without
	// taking its lock, pause UpgradePause, and write the plan over
	// whatever record_version the run has reached meanwhile: the lost
	// update the concurrency checker must find
	// (TestConcurrencyCheckerFindsTheUnguardedUpgrade).
	UnguardedUpgrades bool
	UpgradePause      time.Duration
	// UnleasedLocalSteps records local steps as started with no lease:
	// a process that dies with them leaves attempts no sweep reports
	// lost, the fault the local steps checker must find
	// (TestLocalStepsCheckerFindsUnleasedSteps).
	UnleasedLocalSteps bool
	// LoseCommitAck, when set, is asked after each commit of a
	// transaction that recorded local steps; true makes the process take
	// the commit as failed, as when the commit's answer is lost with the
	// connection after it committed.
	LoseCommitAck func() bool
}

// deps are what the layers of one process share: the pool, the engine,
// the caches, the instruments and the configuration. New builds them
// once; every layer holds the same one.
type deps struct {
	Config
	pool        *pgxpool.Pool
	engine      *engine.Engine
	log         *slog.Logger
	inserter    *river.Client[pgx.Tx]
	manifests   sync.Map // manifest hash → *definition.Manifest
	tenants     tenantCache
	metrics     *metrics
	flowMetrics *flowMetrics
	obs         *Observer
	inputs      *inputCache
	runs        *runCache
	clock       *fairClock
	gate        *yieldGate
	busy        busyTenants
	tracing     *telemetry.Tracing
	// local runs the steps this process's ticks keep (nil: none).
	local *localSteps
	// workerID names this process in the attempts its step workers take.
	workerID string
}

// Points of a tick where Fault can abort it.
const (
	FaultBeforeDecide = "before_decide"
	FaultAfterSave    = "after_save"
	FaultAfterEnqueue = "after_enqueue"
	FaultAfterUpdate  = "after_update"
	FaultAfterCommit  = "after_commit"
	// FaultResultWrite is each transaction that writes step results.
	FaultResultWrite = "result_write"
)

func (t Testing) plainFIFO() bool { return t.PlainFIFO != nil && t.PlainFIFO.Load() }

func (c *deps) fault(point string) error {
	if c.Testing.Fault == nil {
		return nil
	}
	return c.Testing.Fault(point)
}

func (c *deps) faultTx(ctx context.Context, tx pgx.Tx, point string) error {
	if c.Testing.FaultTx == nil {
		return nil
	}
	return c.Testing.FaultTx(ctx, tx, point)
}

// defaultInlineBudget is a few times what deciding a large group of
// ordinary runs takes, well under an expression's own time limit.
const defaultInlineBudget = 100 * time.Millisecond

func newDeps(cfg Config) (*deps, error) {
	env, err := expr.NewEnv()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Tracing == nil {
		cfg.Tracing = telemetry.Disabled()
	}
	if cfg.RescueWindow <= 0 {
		cfg.RescueWindow = 30 * time.Second
	}
	if cfg.InlineBudget <= 0 {
		cfg.InlineBudget = defaultInlineBudget
	}
	inserter, err := newInserter(cfg.Pool, cfg.Logger)
	if err != nil {
		return nil, err
	}
	clock, err := newFairClock(cfg.Pool)
	if err != nil {
		return nil, err
	}
	eval := engine.NewCELEvaluator(expr.NewCache(env, 4096))
	d := &deps{
		Config: cfg, pool: cfg.Pool, log: cfg.Logger, inserter: inserter,
		engine:  &engine.Engine{Eval: eval, MaxBufferedSignals: cfg.MaxBufferedSignals},
		tenants: tenantCache{ttl: 5 * time.Second}, metrics: newMetrics(), flowMetrics: newFlowMetrics(), inputs: newInputCache(4096), runs: newRunCache(4096),
		clock: clock, gate: newYieldGate(maxYield), tracing: cfg.Tracing, workerID: processID(),
	}
	d.obs = &Observer{deps: d}
	return d, nil
}

func (c *deps) river() *river.Client[pgx.Tx] { return c.inserter }

// Wake asks for a tick of the run inside tx. Only the wake that flips the
// run's flag inserts the tick job, so ticks coalesce; the notification
// makes the coordinator fetch it as soon as tx commits.
func (c *Writer) Wake(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID) error {
	flipped, err := store.New(tx).RunRequestTick(ctx, tenantID, runID)
	if err != nil || !flipped {
		return err
	}
	return c.enqueueTick(ctx, tx, tenantID, runID)
}

func (c *deps) enqueueTick(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID) error {
	if _, err := c.river().InsertTx(ctx, tx, TickArgs{TenantID: tenantID, RunID: runID}, nil); err != nil {
		return fmt.Errorf("enqueue tick: %w", err)
	}
	return Notify(ctx, tx, QueueCoordinator)
}

// manifest returns the run's compiled manifest, cached by hash.
func (c *deps) Manifest(ctx context.Context, s *store.Store, r store.Run) (*definition.Manifest, error) {
	if m, ok := c.manifests.Load(r.ManifestHash); ok {
		return m.(*definition.Manifest), nil
	}
	v, err := s.DefinitionVersionGet(ctx, r.TenantID, r.DefinitionKey, r.DefinitionVersion)
	if err != nil {
		return nil, err
	}
	c.manifests.Store(v.ManifestHash, v.Manifest)
	return v.Manifest, nil
}

// tenantCache remembers tenants (tier and admission limits) briefly: a
// change reaches step dispatch within ttl.
type tenantCache struct {
	ttl time.Duration
	m   sync.Map // tenant id → tenantEntry
}

type tenantEntry struct {
	tenant store.Tenant
	at     time.Time
}

func (t *tenantCache) get(ctx context.Context, s *store.Store, tenantID uuid.UUID) (store.Tenant, error) {
	if e, ok := t.m.Load(tenantID); ok && time.Since(e.(tenantEntry).at) < t.ttl {
		return e.(tenantEntry).tenant, nil
	}
	tenant, err := s.TenantGetByID(ctx, tenantID)
	if err != nil {
		return store.Tenant{}, err
	}
	t.m.Store(tenantID, tenantEntry{tenant: tenant, at: time.Now()})
	return tenant, nil
}

// StepQueue is the River queue of a tier's step tasks.
func StepQueue(t store.Tier) string {
	switch t {
	case store.TierInteractive:
		return QueueStepsInteractive
	case store.TierBulk:
		return QueueStepsBulk
	}
	return QueueStepsStandard
}

// SparseLane is the queue of a tier queue's sparse steps (see
// StepArgs.Sparse): its own workers fetch them, so they never wait for a
// worker slot behind another tenant's backlog.
func SparseLane(queue string) string { return queue + sparseSuffix }

const sparseSuffix = "_sparse"
