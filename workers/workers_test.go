package workers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

type testBundle struct {
	ctx    context.Context
	pool   *pgxpool.Pool
	store  *store.Store
	coord  *workers.Runtime
	tenant store.Tenant
}

// setup runs the coordinator and step workers on a schema of their own,
// with the built-in handlers plus the test's.
func setup(t *testing.T, handlers ...map[string]steps.Handler) testBundle {
	t.Helper()
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	b.coord = startCoordinator(t, pool, handlers...)
	b.tenant = testdb.Tenant(t, b.store, nil)
	return b
}

// setupWith is setup with changes to the runtime's Config.
func setupWith(t *testing.T, config func(*workers.Config), handlers ...map[string]steps.Handler) testBundle {
	t.Helper()
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: true, handlers: handlers, config: config})
	b.tenant = testdb.Tenant(t, b.store, nil)
	return b
}

// startCoordinator runs a coordinator, its River client and its sweep on
// pool until the test ends.
func startCoordinator(t *testing.T, pool *pgxpool.Pool, handlers ...map[string]steps.Handler) *workers.Runtime {
	t.Helper()
	return startWith(t, pool, roles{steps: true, handlers: handlers})
}

// roles chooses what a test coordinator runs.
type roles struct {
	steps      bool
	maxWorkers int // 0: the default
	http       steps.HTTPOptions
	handlers   []map[string]steps.Handler
	// config changes the runtime's Config before it is built.
	config func(*workers.Config)
	// local runs the steps the process's ticks dispatch in the process
	// (workers.Config.LocalSteps); DUCTOR_TEST_LOCAL_STEPS=on turns it on
	// for every test that works the step queues.
	local bool
}

// setupLocalWith is setupWith with local steps on.
func setupLocalWith(t *testing.T, config func(*workers.Config), handlers ...map[string]steps.Handler) testBundle {
	t.Helper()
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: true, handlers: handlers, config: config, local: true})
	b.tenant = testdb.Tenant(t, b.store, nil)
	return b
}

func startWith(t *testing.T, pool *pgxpool.Pool, r roles) *workers.Runtime {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("TEST_LOG") != "" {
		log = slog.Default()
	}
	reg := steps.NewRegistry()
	for _, hs := range r.handlers {
		for name, h := range hs {
			if err := reg.Register(name, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	exec := steps.NewExecutor(reg, r.http)
	cfg := workers.Config{Pool: pool, Logger: log, LocalHandlers: exec.Handles}
	if r.steps && (r.local || os.Getenv("DUCTOR_TEST_LOCAL_STEPS") == "on") {
		cfg.LocalSteps = exec
	}
	if r.config != nil {
		r.config(&cfg)
	}
	coord, err := workers.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	client, err := workers.NewClient(pool, workers.Options{
		Coordinator: true, Steps: r.steps, MaxWorkers: r.maxWorkers, Logger: log, Runtime: coord,
		Executor: exec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		var beat sync.WaitGroup
		if r.steps {
			beat.Go(func() { workers.HeartbeatSteps(sweepCtx, pool, log) })
		}
		coord.Sweep(sweepCtx)
		beat.Wait()
	}()
	t.Cleanup(func() {
		stopSweep()
		<-swept
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stopCtx)
	})
	return coord
}

// publish stores a hand-built manifest as the next version of its key.
func (b testBundle) publish(t *testing.T, m *definition.Manifest) {
	t.Helper()
	raw, _ := json.Marshal(m)
	sum := sha256.Sum256(raw)
	_, _, err := b.store.DefinitionPublish(b.ctx, b.tenant.ID, store.Publication{
		Manifest: m, ManifestHash: hex.EncodeToString(sum[:]), Source: string(raw), SourceFormat: "json",
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (b testBundle) start(t *testing.T, key string, input any) uuid.UUID {
	t.Helper()
	run, created, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: key, Input: input}, nil)
	if err != nil || !created {
		t.Fatalf("start %s: created=%v err=%v", key, created, err)
	}
	return run.ID
}

// waitTerminal polls the run until it ends or the deadline passes.
func (b testBundle) waitTerminal(t *testing.T, id uuid.UUID) store.Run {
	t.Helper()
	return b.waitRun(t, id, "end", func(r store.Run) bool { return r.Status.Terminal() })
}

// waitRun polls the run until done holds or 30 s pass; want names what
// was awaited in the failure.
func (b testBundle) waitRun(t *testing.T, id uuid.UUID, want string, done func(store.Run) bool) store.Run {
	t.Helper()
	var run store.Run
	if !testwait.Until(b.ctx, 30*time.Second, func() bool {
		var err error
		run, err = b.store.RunGet(b.ctx, b.tenant.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return done(run)
	}) {
		t.Fatalf("run %s is still %s after 30s, waiting for it to %s", id, run.Status, want)
	}
	return run
}

// step builds a manifest step with the compiler's defaults.
func step(ref string, typ definition.StepType, with map[string]any) definition.Step {
	st := definition.Step{Ref: ref, Type: typ, With: with, Join: definition.JoinAll, OnError: definition.OnErrorFail,
		Retry: definition.RetryPolicy{MaxAttempts: 1}}
	if typ == definition.TypeTask || typ == definition.TypeHTTP {
		st.Retry = definition.RetryPolicy{MaxAttempts: 3, InitialIntervalMS: 10, BackoffCoefficient: 2, MaxIntervalMS: 100}
		st.TimeoutMS = 60_000
	}
	return st
}

func chain(key string, steps ...definition.Step) *definition.Manifest {
	m := &definition.Manifest{Key: key, Steps: steps, Entrypoints: []string{steps[0].Ref}}
	for i, st := range steps {
		m.Order = append(m.Order, st.Ref)
		if i > 0 {
			m.Edges = append(m.Edges, definition.Edge{From: steps[i-1].Ref, To: st.Ref, On: definition.OutcomeSuccess})
		}
	}
	return m
}

func TestChainOfTasksSucceeds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publish(t, chain("echo-chain",
		step("a", definition.TypeTask, map[string]any{"handler": "builtin.echo"}),
		step("b", definition.TypeTransform, map[string]any{"expr": `{"doubled": steps.a.output.n * 2.0}`}),
		step("c", definition.TypeTask, map[string]any{"handler": "builtin.noop"}),
	))
	id := b.start(t, "echo-chain", map[string]any{"n": 21})
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded {
		t.Fatalf("status %s, error %+v", run.Status, run.State.Error)
	}
	nodes, err := b.store.RunNodesSteps(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, n := range nodes {
		got[n.ID] = n.Output
		if n.State != engine.NodeSucceeded {
			t.Errorf("node %s is %s", n.ID, n.State)
		}
	}
	if b2, _ := json.Marshal(got["b"]); string(b2) != `{"doubled":42}` {
		t.Errorf("b output = %s", b2)
	}
	history, err := b.store.RunHistory(b.ctx, b.tenant.ID, id, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(history)) != run.TransitionCount || history[len(history)-1].Seq != run.TransitionCount {
		t.Fatalf("history has %d entries, run counts %d transitions", len(history), run.TransitionCount)
	}
}

func TestFailingTaskRetriesThenFailsRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publish(t, chain("always-fails",
		step("boom", definition.TypeTask, map[string]any{"handler": "builtin.fail", "input": map[string]any{"message": "nope", "retryable": true}}),
	))
	id := b.start(t, "always-fails", nil)
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunFailed {
		t.Fatalf("status %s, want failed", run.Status)
	}
	attempts, err := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 3 {
		t.Fatalf("%d attempts recorded, want 3 (max_attempts)", len(attempts))
	}
	for _, a := range attempts {
		if a.Error == nil || a.FinishedAt.IsZero() {
			t.Errorf("attempt %d: %+v", a.Attempt.Attempt, a)
		}
	}
}

// waitTerminalAfter waits until the run leaves status from (after an
// operator action) and ends again.
func (b testBundle) waitTerminalAfter(t *testing.T, id uuid.UUID, from engine.RunStatus) store.Run {
	t.Helper()
	return b.waitRun(t, id, "end again", func(r store.Run) bool { return r.Status.Terminal() && r.Status != from })
}

// poll waits for cond with a deadline.
func (b testBundle) poll(t *testing.T, cond func() bool) {
	t.Helper()
	if !testwait.Until(b.ctx, 20*time.Second, cond) {
		t.Fatal("condition not met within 20s")
	}
}

// blockUntilCancelled is a handler that runs until its attempt is cancelled.
func blockUntilCancelled(ctx context.Context, _ steps.Call) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
