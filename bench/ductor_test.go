package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/workers"
)

// ductor is one Ductor process on a benchmark's schema: the coordinator,
// its sweep loop and a River client working every queue.
type ductor struct {
	ctx    context.Context
	pool   *pgxpool.Pool
	store  *store.Store
	coord  *workers.Runtime
	client *river.Client[pgx.Tx]
	tenant store.Tenant
}

// logger shows errors only: a benchmark should not pay for logging.
func logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// newClient builds the client exactly as a Ductor process does, for the
// baseline and for Ductor alike.
func newClient(b *testing.B, pool *pgxpool.Pool, opts ...func(*workers.Config)) (*workers.Runtime, *river.Client[pgx.Tx]) {
	b.Helper()
	log := logger()
	exec := steps.NewExecutor(benchRegistry(b), steps.HTTPOptions{})
	cfg := workers.Config{Pool: pool, Logger: log, LocalHandlers: exec.Handles,
		StepBatchMax: envInt("BENCH_STEP_BATCH", 0)} // 0: the default
	// Local steps, as `ductor serve` runs them by default;
	// DUCTOR_LOCAL_STEPS=off runs the whole suite without, for comparison.
	if os.Getenv("DUCTOR_LOCAL_STEPS") != "off" {
		cfg.LocalSteps = exec
	}
	for _, o := range opts {
		o(&cfg)
	}
	coord, err := workers.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(coord.Close)
	client, err := workers.NewClient(pool, workers.Options{
		Coordinator: true, Steps: true, Logger: log, Runtime: coord, Executor: exec,
	})
	if err != nil {
		b.Fatal(err)
	}
	return coord, client
}

// startDuctor starts the workers and the sweep; both stop with the benchmark.
func startDuctor(b *testing.B, pool *pgxpool.Pool, opts ...func(*workers.Config)) *ductor {
	b.Helper()
	ctx := context.Background()
	coord, client := newClient(b, pool, opts...)
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	sweepCtx, stopSweep := context.WithCancel(ctx)
	var swept sync.WaitGroup
	swept.Go(func() { coord.Sweep(sweepCtx) })
	swept.Go(func() { workers.HeartbeatSteps(sweepCtx, pool, logger()) })
	b.Cleanup(func() {
		stopSweep()
		swept.Wait()
		stopCtx, cancel := context.WithTimeout(context.Background(), deadline(15*time.Second, 5*time.Second))
		defer cancel()
		_ = client.Stop(stopCtx)
	})
	d := &ductor{ctx: ctx, pool: pool, store: store.New(pool), coord: coord, client: client}
	d.tenant = d.newTenant(b)
	return d
}

// publish stores a hand-built manifest as the next version of its key.
func (d *ductor) publish(b *testing.B, m *definition.Manifest) {
	b.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	_, _, err = d.store.DefinitionPublish(d.ctx, d.tenant.ID, store.Publication{
		Manifest: m, ManifestHash: hex.EncodeToString(sum[:]), Source: string(raw), SourceFormat: "json",
	})
	if err != nil {
		b.Fatal(err)
	}
}

func (d *ductor) start(key string, input any) (uuid.UUID, error) {
	run, created, err := d.coord.Runs.Start(d.ctx, runs.Trigger{TenantID: d.tenant.ID, Definition: key, Input: input}, nil)
	if err != nil {
		return uuid.Nil, err
	}
	if !created {
		return uuid.Nil, fmt.Errorf("run of %s not created", key)
	}
	return run.ID, nil
}

// waitRun polls a run until it ends; it fails the benchmark unless the run
// succeeded within timeout.
func (d *ductor) waitRun(b *testing.B, id uuid.UUID, timeout time.Duration) store.Run {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		run, err := d.store.RunGet(d.ctx, d.tenant.ID, id)
		if err != nil {
			b.Fatal(err)
		}
		if run.Status.Terminal() {
			if run.Status != engine.RunSucceeded {
				b.Fatalf("run %s ended %s: %+v", id, run.Status, run.State.Error)
			}
			return run
		}
		if time.Now().After(deadline) {
			b.Fatalf("run %s still %s after %s", id, run.Status, timeout)
		}
		time.Sleep(2 * time.Millisecond) // poll interval, not a wait for an event
	}
}

// waitIdle polls until no run of the schema is left unfinished and fails
// the benchmark if one did not succeed.
func (d *ductor) waitIdle(b *testing.B, timeout time.Duration) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var open, failed int
		err := d.pool.QueryRow(d.ctx, `SELECT count(*) FILTER (WHERE finished_at IS NULL),
			count(*) FILTER (WHERE finished_at IS NOT NULL AND status <> 'succeeded') FROM run`).Scan(&open, &failed)
		if err != nil {
			b.Fatal(err)
		}
		if failed > 0 {
			b.Fatalf("%d runs did not succeed", failed)
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d runs unfinished after %s", open, timeout)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// startMany triggers n runs of key from a few goroutines at once.
func (d *ductor) startMany(b *testing.B, key string, n int) {
	b.Helper()
	const triggers = 8
	errs := make(chan error, triggers)
	var wg sync.WaitGroup
	for g := range triggers {
		wg.Go(func() {
			for i := g; i < n; i += triggers {
				if _, err := d.start(key, map[string]any{"i": i}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func storeOf(pool *pgxpool.Pool) *store.Store { return store.New(pool) }

// newTenant creates another tenant of the standard tier.
func (d *ductor) newTenant(b *testing.B) store.Tenant {
	b.Helper()
	t, err := d.store.TenantCreate(d.ctx, "bench-"+randomHex(4), "", store.TierStandard)
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// markHandlerName is a no-op task that notes the wall clock when it runs,
// by run (marks): when a step really started, whether a River worker ran
// it or it ran where its tick decided it (a local step's attempt is
// recorded as started in that tick's transaction, before it runs).
const markHandlerName = "bench.mark"

var marks sync.Map // run id (string) → time.Time

func benchRegistry(b *testing.B) *steps.Registry {
	reg := steps.NewRegistry()
	if err := reg.Register(markHandlerName, func(_ context.Context, c steps.Call) (any, error) {
		marks.LoadOrStore(c.RunID, time.Now())
		return nil, nil
	}); err != nil {
		b.Fatal(err)
	}
	return reg
}

// markOf is when run id's marked step ran.
func markOf(b *testing.B, id uuid.UUID) time.Time {
	b.Helper()
	t, ok := marks.Load(id.String())
	if !ok {
		b.Fatalf("run %s: its marked step did not run", id)
	}
	return t.(time.Time)
}
