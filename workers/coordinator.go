package workers

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

// Coordinator is the shell around the engine: it loads a run, calls
// engine.Decide, and persists the decision in one transaction guarded by
// the run's record_version. Ticks, step workers and the API share it.
type Coordinator struct {
	pool      *pgxpool.Pool
	engine    *engine.Engine
	log       *slog.Logger
	client    atomic.Pointer[river.Client[pgx.Tx]]
	manifests sync.Map // manifest hash → *definition.Manifest
	schemas   sync.Map // manifest hash → *definition.InputValidator
	unserved  unservedGate
	tenants   tenantCache
	// Conflicts counts ticks that lost the record_version race.
	Conflicts   atomic.Int64
	metrics     *metrics
	triggers    *triggerMetrics
	flowMetrics *flowMetrics
	inputs      *inputCache
	runs        *runCache
	bridge      *bridge
	clock       *fairClock
	gate        *yieldGate
	busy        busyTenants
	poolCursor  poolCursor
	results     *resultGroup
	starts      *attemptStarts
	cancels     *stepCancels
	tracing     *telemetry.Tracing
	// workerID names this process in the attempts its step workers take.
	workerID string
	// RescueWindow is added to a step's timeout to lease its attempt.
	RescueWindow time.Duration
	// InlineTicks lets step workers and triggers run a free run's tick in
	// their own transaction (on by default).
	InlineTicks bool
	// InlineBudget bounds the time the engine spends deciding one inline
	// tick (a trigger's, or a result group's for all its runs). Inline
	// ticks run on shared goroutines (the result group's single flusher,
	// the API's request): an expensive decision is interrupted there and
	// handed to the run's tick job, which decides it with no budget but
	// the expressions' own limits, on a worker of its own.
	InlineBudget time.Duration
	// StepBatchMax bounds how many ready steps of one tenant one River job
	// carries (packSteps): 0 is DefaultStepBatchMax, 1 one step a job.
	StepBatchMax int
	// BatchQueueMax bounds the runs a tenant's running batches may have
	// still to act on (CreateBatch): 0 is DefaultBatchQueueMax.
	BatchQueueMax int
	// PlainFIFO turns the fair queue's tags off: step jobs are fetched in
	// insertion order. Only the fairness benchmark sets it, to show what
	// the fair queue is for.
	PlainFIFO bool
	// TickLoadOptions are the store options a tick loads its runs with.
	// Only the concurrency checker sets one (store.SameStatementTickLoad),
	// to show the lost updates the old load allowed.
	TickLoadOptions []store.Option
	// Fault, when set, is called at each named point of a tick; an error
	// aborts the tick there, as a crash would. Tests use it.
	Fault func(point string) error
	// FaultTx, when set, is called inside the transaction of each named
	// point of a write; an error aborts the write there, as a failed
	// statement would. Tests use it to make a statement fail for real.
	FaultTx func(ctx context.Context, tx pgx.Tx, point string) error
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

func (c *Coordinator) fault(point string) error {
	if c.Fault == nil {
		return nil
	}
	return c.Fault(point)
}

func (c *Coordinator) faultTx(ctx context.Context, tx pgx.Tx, point string) error {
	if c.FaultTx == nil {
		return nil
	}
	return c.FaultTx(ctx, tx, point)
}

// NewCoordinator builds a coordinator with a process-wide CEL cache.
// defaultInlineBudget is a few times what deciding a large group of
// ordinary runs takes, well under an expression's own time limit.
const defaultInlineBudget = 100 * time.Millisecond

func NewCoordinator(pool *pgxpool.Pool, log *slog.Logger) (*Coordinator, error) {
	env, err := expr.NewEnv()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	if log == nil {
		log = slog.Default()
	}
	clock, err := newFairClock(pool)
	if err != nil {
		return nil, err
	}
	eval := engine.NewCELEvaluator(expr.NewCache(env, 4096))
	c := &Coordinator{
		pool: pool, log: log, engine: &engine.Engine{Eval: eval},
		tenants: tenantCache{ttl: 5 * time.Second}, RescueWindow: 30 * time.Second, InlineTicks: true, InlineBudget: defaultInlineBudget, metrics: newMetrics(), triggers: newTriggerMetrics(), flowMetrics: newFlowMetrics(), inputs: newInputCache(4096), runs: newRunCache(4096),
		bridge: newBridge(), clock: clock, gate: newYieldGate(maxYield), tracing: telemetry.Disabled(), workerID: processID(),
	}
	c.results = newResultGroup(c)
	c.starts = newAttemptStarts(c)
	c.cancels = newStepCancels(c)
	return c, nil
}

// Close waits (a while) for the step results handed over to be written,
// then releases the connections the coordinator opened of its own (the
// fair clock's). Stop the workers using it first.
func (c *Coordinator) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.results.drain(ctx); err != nil {
		c.log.Error("step results still unrecorded at shutdown; their attempts are retried when their leases run out", "err", err)
	}
	c.cancels.close()
	c.clock.close()
}

// SetClient gives the coordinator the River client it inserts jobs with.
func (c *Coordinator) SetClient(client *river.Client[pgx.Tx]) { c.client.Store(client) }

func (c *Coordinator) river() *river.Client[pgx.Tx] {
	client := c.client.Load()
	if client == nil {
		panic("workers: coordinator used before SetClient")
	}
	return client
}

// Wake asks for a tick of the run inside tx. Only the wake that flips the
// run's flag inserts the tick job, so ticks coalesce; the notification
// makes the coordinator fetch it as soon as tx commits.
func (c *Coordinator) Wake(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID) error {
	flipped, err := store.New(tx).RunRequestTick(ctx, tenantID, runID)
	if err != nil || !flipped {
		return err
	}
	return c.enqueueTick(ctx, tx, tenantID, runID)
}

func (c *Coordinator) enqueueTick(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID) error {
	if _, err := c.river().InsertTx(ctx, tx, TickArgs{TenantID: tenantID, RunID: runID}, nil); err != nil {
		return fmt.Errorf("enqueue tick: %w", err)
	}
	return Notify(ctx, tx, QueueCoordinator)
}

// manifest returns the run's compiled manifest, cached by hash.
func (c *Coordinator) manifest(ctx context.Context, s *store.Store, r store.Run) (*definition.Manifest, error) {
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

// stepQueue is the River queue of a tier's step tasks.
func stepQueue(t store.Tier) string {
	switch t {
	case store.TierInteractive:
		return QueueStepsInteractive
	case store.TierBulk:
		return QueueStepsBulk
	}
	return QueueStepsStandard
}

// sparseLane is the queue of a tier queue's sparse steps (see
// StepArgs.Sparse): its own workers fetch them, so they never wait for a
// worker slot behind another tenant's backlog.
func sparseLane(queue string) string { return queue + sparseSuffix }

const sparseSuffix = "_sparse"

// Manifest returns the compiled manifest a run executes.
func (c *Coordinator) Manifest(ctx context.Context, r store.Run) (*definition.Manifest, error) {
	return c.manifest(ctx, store.New(c.pool), r)
}
