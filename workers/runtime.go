package workers

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// Runtime is one process's layers, built once from a Config by New and
// wired to each other: the unit of work (Writer), the tick loop (Ticker),
// the sweep (Sweeper), the runs service the API and CLI call (Runs), and
// the parts the step workers share (results, starts, cancels). Its fields
// are the layers themselves; it adds no behaviour of its own beyond
// closing them.
type Runtime struct {
	Writer   *Writer
	Ticker   *Ticker
	Sweeper  *Sweeper
	Observer *Observer
	Runs     *Service

	deps    *deps
	results *resultGroup
	starts  *attemptStarts
	cancels *stepCancels
}

// New builds a process's runtime. It inserts its jobs with a River
// client of its own that works nothing (NewClient builds the one that
// works the queues), so it needs no client handed to it later.
func New(cfg Config) (*Runtime, error) {
	d, err := newDeps(cfg)
	if err != nil {
		return nil, err
	}
	w := &Writer{deps: d}
	t := &Ticker{deps: d, w: w}
	b := &Batches{deps: d, w: w}
	r := &Runtime{
		deps: d, Writer: w, Ticker: t, Observer: d.obs,
		Sweeper: &Sweeper{deps: d, w: w, batches: b},
		Runs: &Service{deps: d, w: w, t: t,
			Schedules: &Schedules{deps: d, w: w},
			Tasks:     &Tasks{deps: d, w: w, t: t},
			Events:    &Events{deps: d, w: w},
			Batches:   b,
		},
		results: newResultGroup(t),
		starts:  newAttemptStarts(d),
		cancels: newStepCancels(d),
	}
	return r, nil
}

// newInserter is a River client that only inserts jobs (and cancels
// them), with Ductor's insert middleware.
func newInserter(pool *pgxpool.Pool, log *slog.Logger) (*river.Client[pgx.Tx], error) {
	client, err := river.NewClient(riverpgxv5.New(pool), insertConfig(log))
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
}

// insertConfig is the River configuration every client of Ductor's
// shares: how jobs are inserted and kept.
func insertConfig(log *slog.Logger) *river.Config {
	return &river.Config{
		Logger:                      log,
		CompletedJobRetentionPeriod: time.Hour,
		JobTimeout:                  -1, // each worker sets its own
		MaxAttempts:                 25,
		Middleware:                  []rivertype.Middleware{&fairMiddleware{}, &readyMiddleware{}},
		// A coordinator-only process inserts step jobs it does not work
		// itself (roles split across replicas).
		SkipUnknownJobCheck: true,
		ReindexerIndexNames: reindexed(),
	}
}

// Close waits (a while) for the step results handed over to be written,
// then releases the connections the runtime opened of its own (the fair
// clock's). Stop the workers using it first.
func (r *Runtime) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.results.drain(ctx); err != nil {
		r.deps.log.Error("step results still unrecorded at shutdown; their attempts are retried when their leases run out", "err", err)
	}
	r.cancels.close()
	r.deps.clock.close()
}

// Collectors are the runtime's metrics for a Prometheus registry: tick
// duration, step duration by type and outcome, finished runs by status,
// record_version conflicts, time bulk work yielded to idle tenants, and
// live queue depth and in-flight steps per tier and tenant.
func (r *Runtime) Collectors() []prometheus.Collector {
	d := r.deps
	return append(append(d.metrics.collectors(),
		d.metrics.tickSeconds, d.metrics.stepSeconds, d.metrics.finished, d.metrics.warnings, d.metrics.discarded,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ductor_tick_conflicts_total", Help: "Ticks that lost the record_version race and decided again.",
		}, func() float64 { return float64(r.Ticker.Conflicts.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ductor_bulk_yield_seconds_total", Help: "Time grouped starts, group ticks and tick jobs waited for an idle tenant's urgent work.",
		}, func() float64 { return time.Duration(d.gate.yielded.Load()).Seconds() }),
		&queueCollector{c: d}, d.flowMetrics.decisions, &flowCollector{c: d},
	), d.triggers.collectors()...)
}
