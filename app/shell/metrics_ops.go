package shell

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

// opsMetrics are the instruments an operator alerts on: queue wait, runs
// started and finished, attempts and retries, and the traffic of signals,
// events and bridge workers. Every label is bounded: definition keys and
// handler names are tenant data, so only the first maxLabelValues of each
// get a label of their own (labelCap) and bridge handlers none.
type opsMetrics struct {
	queueWait   *prometheus.HistogramVec
	started     *prometheus.CounterVec
	attempts    *prometheus.CounterVec
	retries     *prometheus.CounterVec
	signals     *prometheus.CounterVec
	events      *prometheus.CounterVec
	deliveries  prometheus.Counter
	polls       *prometheus.CounterVec
	claimed     prometheus.Counter
	results     *prometheus.CounterVec
	heartbeats  *prometheus.CounterVec
	scrapeFails *prometheus.CounterVec
	definitions *labelCap
}

// stepBuckets reach from a millisecond to a day: a step's timeout is its
// own (60 s by default, none at most), so its time in the queue or on a
// worker can be that long.
var stepBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
	120, 300, 600, 1800, 3600, 7200, 21600, 86400}

func newOpsMetrics() *opsMetrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	return &opsMetrics{
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ductor_step_schedule_to_start_seconds", Help: "Time a step attempt waited from being enqueued to starting on a worker (or being claimed by a bridge worker).",
			Buckets: stepBuckets,
		}, []string{"tier", "type", "handler"}),
		started:     counter("ductor_runs_started_total", "Runs created: triggered, children and ContinueAsNew successors.", "definition"),
		attempts:    counter("ductor_step_attempts_total", "Step attempts that ended, by step type and outcome (succeeded, failed).", "type", "outcome"),
		retries:     counter("ductor_step_retries_total", "Failed step attempts scheduled to be retried.", "type"),
		signals:     counter("ductor_signals_total", "Signals sent to runs, by outcome (accepted, or the error code).", "outcome"),
		events:      counter("ductor_events_total", "Events published, by outcome (created, duplicate, or the error code).", "outcome"),
		deliveries:  prometheus.NewCounter(prometheus.CounterOpts{Name: "ductor_event_deliveries_total", Help: "Runs an event was delivered to (runs with a node waiting for its name)."}),
		polls:       counter("ductor_bridge_polls_total", "Bridge worker polls, by outcome (tasks, empty, or the error code).", "outcome"),
		claimed:     prometheus.NewCounter(prometheus.CounterOpts{Name: "ductor_bridge_tasks_claimed_total", Help: "Bridge tasks handed to workers."}),
		results:     counter("ductor_bridge_results_total", "Bridge task results, by verb (complete, fail) and outcome (accepted, or the error code).", "verb", "outcome"),
		heartbeats:  counter("ductor_bridge_heartbeats_total", "Bridge task heartbeats, by outcome (accepted, or the error code).", "outcome"),
		scrapeFails: counter("ductor_metrics_scrape_errors_total", "Queries a metrics scrape could not run, by collector: their series are missing from that scrape.", "collector"),
		definitions: newLabelCap(maxLabelValues, maxLabelValuesPerTenant),
	}
}

func (m *opsMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.queueWait, m.started, m.attempts, m.retries, m.signals, m.events, m.deliveries,
		m.polls, m.claimed, m.results, m.heartbeats, m.scrapeFails}
}

// outcome is "accepted" for a nil error, else its error code (a fixed
// set).
func outcome(err error) string {
	if err == nil {
		return "accepted"
	}
	return string(apperr.CodeOf(err))
}

// tierLabels are the tiers a step queue serves.
var tierLabels = func() map[string]bool {
	m := setOf()
	for _, t := range store.Tiers {
		m[string(t)] = true
	}
	return m
}()

// tierOf is the tier a step queue serves (its sparse lane included), or
// "other".
func tierOf(queue string) string {
	t, ok := strings.CutPrefix(strings.TrimSuffix(queue, sparseSuffix), "steps_")
	if !ok {
		return labelOther
	}
	return bounded(tierLabels, t)
}

// handlerLabel is a task step's handler when this process runs it (Go
// code names it, so the set is bounded), else "other"; "" for other step
// types.
func (c *Observer) handlerLabel(typ string, params map[string]any) string {
	if typ != "task" {
		return ""
	}
	h, _ := params["handler"].(string)
	local := c.LocalHandlers
	if h == "" || local == nil || !local(h) {
		return labelOther
	}
	return h
}
