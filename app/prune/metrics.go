package prune

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the pruner's Prometheus instruments.
type metrics struct {
	runs, rows, events, errors prometheus.Counter
	pass                       prometheus.Histogram
	lastSuccess                prometheus.Gauge
}

func newMetrics() *metrics {
	return &metrics{
		runs:   prometheus.NewCounter(prometheus.CounterOpts{Name: "ductor_prune_runs_total", Help: "Finished runs deleted by the retention prune."}),
		rows:   prometheus.NewCounter(prometheus.CounterOpts{Name: "ductor_prune_rows_total", Help: "Rows deleted by the retention prune, runs, their rows and events included."}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "ductor_prune_events_total", Help: "Events that woke nothing deleted by the retention prune."}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "ductor_prune_errors_total", Help: "Prune passes that failed."}),
		pass: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "ductor_prune_pass_duration_seconds", Help: "Time one prune pass took, pauses included.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600},
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ductor_prune_last_success_timestamp_seconds", Help: "When this process last finished a prune pass (or found another replica pruning).",
		}),
	}
}

func (m *metrics) observe(st Stats, err error) {
	if err != nil {
		m.errors.Inc()
		return
	}
	m.runs.Add(float64(st.Runs))
	m.rows.Add(float64(st.Rows))
	m.events.Add(float64(st.Events))
	m.lastSuccess.Set(float64(time.Now().Unix()))
	if !st.Skipped {
		m.pass.Observe(st.Duration.Seconds())
	}
}

// Collectors are the pruner's metrics for a Prometheus registry.
func (p *Pruner) Collectors() []prometheus.Collector {
	m := p.metrics
	return []prometheus.Collector{m.runs, m.rows, m.events, m.errors, m.pass, m.lastSuccess}
}
