package shell

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/telemetry"
)

// metrics are the coordinator's Prometheus instruments.
type metrics struct {
	tickSeconds *prometheus.HistogramVec
	stepSeconds *prometheus.HistogramVec
	finished    *prometheus.CounterVec
	warnings    *prometheus.CounterVec
	discarded   *prometheus.CounterVec
	*opsMetrics
}

func newMetrics() *metrics {
	m := &metrics{
		tickSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ductor_tick_duration_seconds", Help: "Time to decide and persist one coordinator tick.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"path"}),
		stepSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ductor_step_duration_seconds", Help: "Time one step attempt took to execute, on a worker or a bridge worker, by tier, step type, handler and code (success, or the attempt's error code).",
			Buckets: stepBuckets,
		}, []string{"tier", "type", "handler", "code"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_runs_finished_total", Help: "Runs that reached a terminal status, by definition and status.",
		}, []string{"definition", "status"}),
		warnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_run_warnings_total", Help: "Warnings runs raised, such as passing the soft transition limit.",
		}, []string{"code"}),
		discarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_events_discarded_total",
			Help: "Events a run refused, by reason: match_error (a match_expr failed on the event, counted as no match) or no_match.",
		}, []string{"reason"}),
		opsMetrics: newOpsMetrics(),
	}
	telemetry.InitSeries(m.discarded, []string{engine.DiscardMatchError, engine.DiscardNoMatch})
	return m
}

// countDiscards counts a decision's discarded events; the reason label
// takes only the engine's fixed codes, never anything from the event.
func (m *metrics) countDiscards(d *engine.Decision) {
	for _, x := range d.Discarded {
		switch x.Code {
		case engine.DiscardMatchError, engine.DiscardNoMatch:
			m.discarded.WithLabelValues(x.Code).Inc()
		}
	}
}

// observeTick records how long a tick took, by how it ran.
func (c *Observer) observeTick(path string, start time.Time) {
	c.metrics.tickSeconds.WithLabelValues(path).Observe(time.Since(start).Seconds())
}

var (
	queueDepthDesc = prometheus.NewDesc("ductor_queue_depth", "Step tasks waiting to start, by tier queue (or bridge, for bridge workers' tasks not yet claimed) and tenant.",
		[]string{"queue", "tenant_id"}, nil)
	inFlightDesc = prometheus.NewDesc("ductor_steps_in_flight", "Step tasks running, by tier queue (or bridge, for claimed bridge tasks) and tenant.",
		[]string{"queue", "tenant_id"}, nil)
	oldestDesc = prometheus.NewDesc("ductor_queue_oldest_age_seconds", "Age of the oldest step task waiting to start, by tier queue (or bridge).",
		[]string{"queue"}, nil)
	activeRunsDesc = prometheus.NewDesc("ductor_runs_active", "Runs not yet ended, by status.", []string{"status"}, nil)
)

// queueCollector reads queue depth, steps in flight, the oldest waiting
// step and active runs from Postgres when scraped, so every replica
// reports the same numbers. Idle is 0, not silence: each status of
// ductor_runs_active has its series, and a queue with no step task has
// one series of ductor_queue_depth and ductor_steps_in_flight with
// tenant_id="" reporting 0 (and ductor_queue_oldest_age_seconds 0). A
// query that fails is logged and counted in
// ductor_metrics_scrape_errors_total; its series are missing from that
// scrape, so a failure is not mistaken for idle.
type queueCollector struct{ c *deps }

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- inFlightDesc
	ch <- oldestDesc
	ch <- activeRunsDesc
}

const activeRunsQuery = `SELECT status, count(*) FROM run WHERE status IN ('pending', 'running', 'waiting') GROUP BY 1`

// activeStatuses are the statuses ductor_runs_active always reports.
var activeStatuses = []string{"pending", "running", "waiting"}

// knownQueues are the queues the queue gauges always report: each tier's
// step queue and the bridge.
func knownQueues() []string {
	qs := make([]string, 0, len(store.Tiers)+1)
	for _, t := range store.Tiers {
		qs = append(qs, StepQueue(t))
	}
	return append(qs, bridgeTier)
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	q.report("queue", q.collectQueues(ctx, ch))
	q.report("runs", q.collectRuns(ctx, ch))
}

func (q *queueCollector) report(collector string, err error) {
	if err == nil {
		return
	}
	q.c.metrics.scrapeFails.WithLabelValues(collector).Inc()
	q.c.log.Warn("metrics scrape query failed", "collector", collector, "err", err)
}

func (q *queueCollector) collectQueues(ctx context.Context, ch chan<- prometheus.Metric) error {
	depths, err := store.New(q.c.pool).QueueDepths(ctx, sparseSuffix)
	if err != nil {
		return err
	}
	oldest := map[string]float64{}
	seen := map[*prometheus.Desc]map[string]bool{queueDepthDesc: {}, inFlightDesc: {}}
	for _, d := range depths {
		desc := queueDepthDesc
		if d.State == "running" {
			desc = inFlightDesc
		} else {
			oldest[d.Queue] = max(oldest[d.Queue], d.Age)
		}
		seen[desc][d.Queue] = true
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, d.Steps, d.Queue, d.Tenant)
	}
	for _, queue := range knownQueues() {
		for desc, queues := range seen {
			if !queues[queue] {
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 0, queue, "")
			}
		}
		if _, ok := oldest[queue]; !ok {
			oldest[queue] = 0
		}
	}
	for queue, age := range oldest {
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age, queue)
	}
	return nil
}

func (q *queueCollector) collectRuns(ctx context.Context, ch chan<- prometheus.Metric) error {
	rows, err := q.c.pool.Query(ctx, activeRunsQuery)
	if err != nil {
		return err
	}
	defer rows.Close()
	counts := map[string]float64{}
	for rows.Next() {
		var status string
		var n float64
		if err := rows.Scan(&status, &n); err != nil {
			return err
		}
		counts[status] = n
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, status := range activeStatuses {
		ch <- prometheus.MustNewConstMetric(activeRunsDesc, prometheus.GaugeValue, counts[status], status)
	}
	return nil
}
