package shell

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// Shell is the layers New builds, wired to each other: the unit of work
// (Writer), the tick loop (Ticker), the sweep (Sweeper), the instruments
// (Observer) and what step workers share (Steps). It adds no behaviour of
// its own beyond closing them and listing their metrics.
type Shell struct {
	Writer   *Writer
	Ticker   *Ticker
	Sweeper  *Sweeper
	Observer *Observer
	Steps    *Steps

	deps *deps
}

// New builds the shell of one process from cfg. It inserts its jobs with
// a River client of its own that works nothing (the workers package
// builds the one that works the queues), so nothing is handed to it
// later.
func New(cfg Config) (*Shell, error) {
	d, err := newDeps(cfg)
	if err != nil {
		return nil, err
	}
	w := &Writer{deps: d}
	t := &Ticker{deps: d, w: w}
	results, cancels := newResultGroup(t), newStepCancels(d)
	if cfg.Local.Run != nil {
		d.local = newLocalSteps(d, results, cancels)
	}
	return &Shell{
		deps: d, Writer: w, Ticker: t, Observer: d.obs,
		Sweeper: &Sweeper{deps: d, w: w},
		Steps:   &Steps{deps: d, results: results, starts: newAttemptStarts(d), cancels: cancels},
	}, nil
}

// Close waits (a while) for the local steps running to finish and for the
// step results handed over to be written, then releases the connections
// the shell opened of its own (the fair clock's). Stop the workers using
// it first.
func (sh *Shell) Close() {
	if sh.deps.local != nil {
		sh.deps.local.close(15 * time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sh.Steps.results.drain(ctx); err != nil {
		sh.deps.log.Error("step results still unrecorded at shutdown; their attempts are retried when their leases run out", "err", err)
	}
	sh.Steps.cancels.close()
	sh.deps.clock.close()
}

// Collectors are the shell's metrics for a Prometheus registry: tick
// duration, step duration by type and outcome, finished runs by status,
// record_version conflicts, time bulk work yielded to idle tenants, live
// queue depth and in-flight steps per tier and tenant, and local steps.
func (sh *Shell) Collectors() []prometheus.Collector {
	d := sh.deps
	cs := d.metrics.collectors()
	if d.local != nil {
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "ductor_local_steps_running", Help: "Local steps (run where their tick decided them, without a River job) running in this process now.",
			}, func() float64 { return float64(d.local.running()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "ductor_local_steps_total", Help: "Local steps this process has run.",
			}, func() float64 { return float64(d.local.launched.Load()) }))
	}
	return append(cs,
		d.metrics.tickSeconds, d.metrics.stepSeconds, d.metrics.finished, d.metrics.warnings, d.metrics.discarded,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ductor_tick_conflicts_total", Help: "Ticks that lost the record_version race and decided again.",
		}, func() float64 { return float64(sh.Ticker.Conflicts.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ductor_bulk_yield_seconds_total", Help: "Time grouped starts, group ticks and tick jobs waited for an idle tenant's urgent work.",
		}, func() float64 { return time.Duration(d.gate.yielded.Load()).Seconds() }),
		&queueCollector{c: d}, d.flowMetrics.decisions, &flowCollector{c: d},
	)
}

// Steps is what the step workers of a process share: the grouped writes
// of attempt starts and results, and the cancels of running attempts.
type Steps struct {
	*deps
	results *resultGroup
	starts  *attemptStarts
	cancels *stepCancels
}

// Log is the logger of the process.
func (st *Steps) Log() *slog.Logger { return st.log }

// RescueWindow is added to a step's timeout to lease its attempt.
func (st *Steps) RescueWindow() time.Duration { return st.Config.RescueWindow }

// Watch registers attempts about to run, each with a context derived
// from ctx that ends when the attempt is cancelled; each attempt's
// release func unregisters it.
func (st *Steps) Watch(ctx context.Context, keys []store.AttemptKey) ([]context.Context, []func(), error) {
	return st.cancels.watch(ctx, keys)
}

// Take records that this process took an attempt (grouped with the
// starts of other workers) and reports what became of it, trying again
// while the database is unavailable until until.
func (st *Steps) Take(ctx context.Context, take store.AttemptTake, sparse bool, until time.Time) (store.TakeOutcome, time.Time, error) {
	return st.starts.start(ctx, take, sparse, until)
}

// HandOver gives an attempt's result to the result group, to be recorded
// (and its run ticked) until until; the channel closes once it is
// recorded or given up on.
func (st *Steps) HandOver(key store.RunKey, result engine.StepResult, until time.Time) (<-chan struct{}, error) {
	return st.results.handOver(key, result, until)
}

// Begin starts an attempt's span and metrics; the returned func ends
// them with the attempt's error, if any.
func (st *Steps) Begin(ctx context.Context, job *river.Job[StepArgs], a StepArgs) (context.Context, func(*engine.Error)) {
	return st.obs.attemptBegins(ctx, job.Queue, job.CreatedAt, a)
}
