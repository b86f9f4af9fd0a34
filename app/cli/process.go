package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/logging"
	"github.com/ductor/ductor/app/prune"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/telemetry"
	"github.com/ductor/ductor/app/tenantsecrets"
	meter "github.com/ductor/ductor/app/usage"
	"github.com/ductor/ductor/workers"
)

// process is one running Ductor: the HTTP server and the River workers its
// roles ask for, until ctx ends.
type process struct {
	cfg  config.Config
	pool *pgxpool.Pool
	log  *slog.Logger
	gate *logging.Gate // holds a database outage's lines back
	env  Env
	dev  bool // `ductor dev`: may offer the dev login
}

func (p process) run(ctx context.Context) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		telemetry.BuildInfo(), telemetry.PoolStats(p.pool))
	if p.gate != nil {
		defer p.watchOutages(ctx)()
	}
	tracing, err := telemetry.Setup(ctx, p.env.Getenv)
	if err != nil {
		return &config.Error{Setting: "OTEL_EXPORTER_OTLP_ENDPOINT", Problem: err.Error()}
	}
	defer p.shutdownTracing(tracing)

	box, err := p.secretBox()
	if err != nil {
		return err
	}
	exec := steps.NewExecutor(steps.NewRegistry(), steps.HTTPOptions{Allow: p.cfg.HTTPAllow}, steps.WithLogger(p.log),
		steps.WithSecrets(tenantsecrets.New(tenantsecrets.Config{Store: store.New(p.pool), Box: box})))
	// Local steps need both halves in this process: the ticks that
	// dispatch them and the executor the step workers run them with.
	var local *steps.Executor
	if p.cfg.LocalSteps && p.cfg.Roles.Has(config.RoleCoordinator) && p.cfg.Roles.Has(config.RoleSteps) {
		local = exec
	}
	coord, err := workers.New(workers.Config{
		Pool: p.pool, Logger: p.log, Tracing: tracing, LocalHandlers: exec.Handles, LocalSteps: local,
		StepBatchMax: p.cfg.StepBatch, RescueWindow: p.cfg.RescueWindow,
		Subscriptions: subscriptions.Config{
			Secrets: box, Allow: p.cfg.HTTPAllow, MaxAge: p.cfg.SubscriptionMaxAge,
			DisableAfter: p.cfg.SubscriptionDisableAfter, Timeout: p.cfg.SubscriptionTimeout,
		},
		Usage: meter.Config{TenantLabels: p.cfg.UsageTenantLabels},
	})
	if err != nil {
		return err
	}
	defer coord.Close()
	reg.MustRegister(coord.Collectors()...)
	pruner := p.pruner()
	if pruner != nil {
		reg.MustRegister(pruner.Collectors()...)
	}
	stopWorkers, err := p.startWorkers(ctx, coord, exec, pruner)
	if err != nil {
		return err
	}
	defer stopWorkers()

	if !p.cfg.Roles.Serves() {
		<-ctx.Done()
		return nil
	}
	ln, err := net.Listen("tcp", p.cfg.Addr)
	if err != nil {
		return &config.Error{Setting: "DUCTOR_ADDR", Problem: err.Error()}
	}
	p.log.Info("listening", "addr", ln.Addr().String(), "roles", p.cfg.Roles)
	if p.env.Ready != nil {
		p.env.Ready(ln.Addr().String())
	}
	web, err := p.web(ctx, ln.Addr().String())
	if err != nil {
		return err
	}
	if p.cfg.Roles.Has(config.RoleAPI) {
		defer listenTasks(ctx, coord)()
	}
	srv := server.New(server.Deps{
		Secrets: box, Subscriptions: coord.Subscriptions,
		Login: web.Login, DevLogin: web.DevLogin, BaseURL: web.BaseURL,
		Pool: p.pool, Store: store.New(p.pool), Logger: p.log, Registry: reg, Runs: coord.Runs,
		API: p.cfg.Roles.Has(config.RoleAPI), Web: p.cfg.Roles.Has(config.RoleWeb), APIRate: p.cfg.APIRate,
		ValidateInput: server.NewInputValidator(), TrustedProxies: p.cfg.TrustedProxies, Usage: coord.Usage,
	})
	return srv.Serve(ctx, ln)
}

// startWorkers builds the River client the coordinator enqueues with and,
// for the coordinator and steps roles, starts it. The returned function
// stops it, letting running jobs finish for a while.
func (p process) startWorkers(ctx context.Context, coord *workers.Runtime, exec *steps.Executor, pruner *prune.Pruner) (func(), error) {
	client, err := workers.NewClient(p.pool, workers.Options{
		Coordinator: p.cfg.Roles.Has(config.RoleCoordinator),
		Steps:       p.cfg.Roles.Has(config.RoleSteps),
		Logger:      p.log,
		Runtime:     coord,
		Executor:    exec,
	})
	if err != nil {
		return nil, err
	}
	if !p.cfg.Roles.Works() {
		return func() {}, nil
	}
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("start workers: %w", err)
	}
	sweepCtx, stopSweep := context.WithCancel(context.WithoutCancel(ctx))
	var loops sync.WaitGroup
	if p.cfg.Roles.Has(config.RoleCoordinator) {
		loops.Go(func() { coord.Sweep(sweepCtx) })
		loops.Go(func() { coord.Runs.Schedules.Run(sweepCtx) })
		loops.Go(func() { workers.DeleteExpiredLogins(sweepCtx, p.pool, p.log) })
	}
	if p.cfg.Roles.Has(config.RoleSteps) {
		loops.Go(func() { workers.HeartbeatSteps(sweepCtx, p.pool, p.log) })
	}
	if pruner != nil {
		loops.Go(func() { pruner.Run(sweepCtx) })
	}
	return func() {
		stopSweep()
		loops.Wait()
		stopCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil && !errors.Is(err, context.Canceled) {
			p.log.Warn("workers did not stop cleanly", "err", err)
		}
	}, nil
}

// watchOutages probes the database while the log gate holds an outage's
// lines back, so that the log says when it is back; the returned function
// stops it.
func (p process) watchOutages(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.gate.Watch(ctx, time.Second, p.pool.Ping)
	}()
	return func() { cancel(); <-done }
}

// shutdownTracing exports the spans still buffered, for a few seconds at
// most.
func (p process) shutdownTracing(t *telemetry.Tracing) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		p.log.Warn("spans not exported at shutdown", "err", err)
	}
}

// secretBox seals stored secrets under DUCTOR_SECRET_KEY; without one,
// webhooks are unavailable (and say so).
func (p process) secretBox() (*secrets.Box, error) {
	if p.cfg.SecretKey == "" {
		p.log.Warn("DUCTOR_SECRET_KEY is not set: webhooks and tenant secrets are unavailable")
		return nil, nil
	}
	box, err := secrets.NewKeyring(p.cfg.SecretKey, p.cfg.SecretKeyPrevious)
	if err != nil {
		return nil, &config.Error{Setting: "DUCTOR_SECRET_KEY", Problem: err.Error()}
	}
	return box, nil
}

// pruner is the retention prune a coordinator runs, unless
// DUCTOR_PRUNE_INTERVAL turned it off.
func (p process) pruner() *prune.Pruner {
	if !p.cfg.Roles.Has(config.RoleCoordinator) || p.cfg.PruneInterval <= 0 {
		return nil
	}
	return prune.New(p.pool, prune.Options{Interval: p.cfg.PruneInterval, Logger: p.log})
}

// newLogger is the process's logger on stderr, in DUCTOR_LOG_FORMAT or
// else the command's own format.
func newLogger(env Env, cfg config.Config, format string) (*slog.Logger, *logging.Gate, error) {
	if cfg.LogFormat != "" {
		format = cfg.LogFormat
	}
	return logging.New(env.Stderr, logging.Options{Format: format, Level: cfg.LogLevel})
}

// listenTasks relays new bridge tasks to the API's long polls until ctx
// ends; the returned function waits for it to let go of its connection.
func listenTasks(ctx context.Context, coord *workers.Runtime) func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		coord.Runs.Tasks.Listen(ctx)
	}()
	return func() { <-done }
}
