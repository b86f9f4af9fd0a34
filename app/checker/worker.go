package checker

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/logging"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/workers"
)

// WorkerOptions configure a worker process (StartWorker).
type WorkerOptions struct {
	// SameStatement makes its ticks lock and read runs in one statement,
	// as they once did (store.SameStatementTickLoad, an option of its
	// coordinator's tick loads).
	SameStatement bool `json:"same_statement,omitempty"`
	// The nemesis: with probability PauseChance (default 1), a tick
	// pauses LockPauseMS milliseconds in the database between its load's
	// snapshot and its locks (ductor_fault_pause), and DecidePauseMS in
	// the process between reading the run and deciding, holding its lock
	// (the before_decide fault point).
	LockPauseMS   float64 `json:"lock_pause_ms,omitempty"`
	DecidePauseMS float64 `json:"decide_pause_ms,omitempty"`
	PauseChance   float64 `json:"pause_chance,omitempty"`
	// RescueWindow is the coordinator's (default 1 s).
	RescueWindow time.Duration `json:"rescue_window,omitempty"`
	// NoInlineTicks sends every result through its run's tick job.
	NoInlineTicks bool `json:"no_inline_ticks,omitempty"`
	// HoldTicks makes every tick block before deciding, holding its run
	// and its River job, until the process is killed.
	HoldTicks bool `json:"hold_ticks,omitempty"`
	// StepBatchMax is the coordinator's (0: the default; 1: one step a
	// job).
	StepBatchMax int `json:"step_batch_max,omitempty"`
	// LocalSteps makes the worker run the steps its ticks dispatch in
	// its own process (workers.Config.LocalSteps), without River jobs.
	LocalSteps bool `json:"local_steps,omitempty"`
	// UnleasedLocalSteps is the fault the local steps checker must find:
	// local attempts recorded as started with no lease, so that nothing
	// ever reports them lost (shell.Testing.UnleasedLocalSteps).
	UnleasedLocalSteps bool `json:"unleased_local_steps,omitempty"`
	// SecretKey, when set, makes the worker send subscriptions'
	// deliveries (its sweep runs subscriptions.Service.Run), to loopback
	// receivers too, looking for due ones every DeliveryPollMS
	// milliseconds; UnguardedClaim is the fault of
	// subscriptions.Config.UnguardedClaim (see deliveries.go).
	SecretKey      string  `json:"secret_key,omitempty"`
	DeliveryPollMS float64 `json:"delivery_poll_ms,omitempty"`
	UnguardedClaim bool    `json:"unguarded_claim,omitempty"`
}

// workerEnv carries a worker's options, as JSON, to the process
// StartWorker starts; DATABASE_URL carries its database.
const workerEnv = "DUCTOR_CHECKER_WORKER"

// RunWorkerIfAsked makes this process a worker and exits when StartWorker
// started it as one; otherwise it returns at once. A test package that
// starts workers calls it first thing in TestMain, since a worker is the
// package's own test binary run again.
func RunWorkerIfAsked() {
	raw := os.Getenv(workerEnv)
	if raw == "" {
		return
	}
	if err := runWorker(raw); err != nil {
		fmt.Fprintln(os.Stderr, "checker worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runWorker runs a coordinator, its River client (every queue) and its
// sweep, with StepHandler, until SIGTERM or until its parent closes its
// stdin (or dies). It prints "ready" once it works. It logs errors to
// stderr behind the outage gate `ductor serve` uses, so a database outage
// is said once and then every 30 s, not by every loop at every try.
func runWorker(raw string) error {
	var o WorkerOptions
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	pool, err := workerPool(ctx, o)
	if err != nil {
		return err
	}
	defer pool.Close()
	log, gate, err := logging.New(os.Stderr, logging.Options{Format: logging.Text, Level: slog.LevelError})
	if err != nil {
		return err
	}
	watch, unwatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); gate.Watch(watch, time.Second, pool.Ping) }()
	defer func() { unwatch(); <-watched }()
	coord, client, err := workerCoordinator(pool, log, o)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	swept, beat := make(chan struct{}), make(chan struct{})
	go func() { defer close(swept); coord.Sweep(ctx) }()
	go func() { defer close(beat); workers.HeartbeatSteps(ctx, pool, slog.New(slog.DiscardHandler)) }()
	fmt.Println("ready")
	<-ctx.Done()
	<-swept
	<-beat
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = client.Stop(stopCtx)
	coord.Close()
	return nil
}

// workerPool opens the worker's pool; the nemesis's database half is a
// session setting of every connection.
func workerPool(ctx context.Context, o WorkerOptions) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 20
	if o.LockPauseMS > 0 {
		cfg.ConnConfig.RuntimeParams["ductor.fault_pause_ms"] = strconv.FormatFloat(o.LockPauseMS, 'f', -1, 64)
		cfg.ConnConfig.RuntimeParams["ductor.fault_pause_chance"] = strconv.FormatFloat(o.chance(), 'f', -1, 64)
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}

func workerCoordinator(pool *pgxpool.Pool, log *slog.Logger, o WorkerOptions) (*workers.Runtime, *river.Client[pgx.Tx], error) {
	reg := steps.NewRegistry()
	if err := reg.Register(StepHandler, stepHandler(pool)); err != nil {
		return nil, nil, err
	}
	exec := steps.NewExecutor(reg, steps.HTTPOptions{}, steps.WithLogger(log))
	cfg := workers.Config{
		Pool: pool, Logger: log, LocalHandlers: exec.Handles,
		RescueWindow: cmp.Or(o.RescueWindow, time.Second), NoInlineTicks: o.NoInlineTicks, StepBatchMax: o.StepBatchMax,
		Testing: shell.Testing{Fault: o.fault(), UnleasedLocalSteps: o.UnleasedLocalSteps},
	}
	if o.LocalSteps {
		cfg.LocalSteps = exec
	}
	if o.SecretKey != "" {
		sub, err := o.subscriptions()
		if err != nil {
			return nil, nil, err
		}
		cfg.Subscriptions = sub
	}
	if o.SameStatement {
		cfg.Testing.TickLoadOptions = []store.Option{store.SameStatementTickLoad()}
	}
	coord, err := workers.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	client, err := workers.NewClient(pool, workers.Options{
		Coordinator: true, Steps: true, Logger: log, Runtime: coord, Executor: exec,
	})
	return coord, client, err
}

// fault is the nemesis's process half: a pause between reading a run and
// deciding on it (while holding its lock), or, with HoldTicks, no end.
func (o WorkerOptions) fault() func(string) error {
	if o.DecidePauseMS <= 0 && !o.HoldTicks {
		return nil
	}
	return func(point string) error {
		if point != shell.FaultBeforeDecide {
			return nil
		}
		if o.HoldTicks {
			select {} // until the process is killed
		}
		if rand.Float64() < o.chance() {
			time.Sleep(time.Duration(o.DecidePauseMS * float64(time.Millisecond))) // the nemesis's pause, not a wait for anything
		}
		return nil
	}
}

func (o WorkerOptions) chance() float64 {
	if o.PauseChance <= 0 {
		return 1
	}
	return o.PauseChance
}
