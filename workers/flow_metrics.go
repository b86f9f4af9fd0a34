package workers

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/flow"
	"github.com/ductor/ductor/app/store"
)

// flowMetrics count flow control's decisions by kind of rule and
// outcome, fixed sets both: never a key, which comes from outside.
type flowMetrics struct {
	decisions *prometheus.CounterVec
}

func newFlowMetrics() *flowMetrics {
	return &flowMetrics{decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ductor_flow_decisions_total",
		Help: "Flow control's decisions on starts and steps, by rule (concurrency, debounce, throttle, rate_limit, step) and outcome (started, queued, held, joined, admitted, refused, cancelled, delayed).",
	}, []string{"rule", "outcome"})}
}

func (m *flowMetrics) decided(k flow.Kind, outcome string) {
	m.decisions.WithLabelValues(string(k), outcome).Inc()
}

var flowRunsDesc = prometheus.NewDesc("ductor_flow_runs",
	"Runs under a flow control rule, by tenant, definition, rule (concurrency[N], debounce, throttle) and state: running (holding a concurrency slot) or queued (held back).",
	[]string{"tenant_id", "definition", "rule", "state"}, nil)

// flowCollector reads the runs under each rule from Postgres when
// scraped, so that every replica reports the same numbers. Its labels
// are the tenant, the definition and the rule's place in it, never a key.
type flowCollector struct{ c *Coordinator }

func (f *flowCollector) Describe(ch chan<- *prometheus.Desc) { ch <- flowRunsDesc }

func (f *flowCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	gauges, err := store.New(f.c.pool).FlowGauges(ctx)
	if err != nil {
		return
	}
	for _, g := range gauges {
		ch <- prometheus.MustNewConstMetric(flowRunsDesc, prometheus.GaugeValue, float64(g.Runs), g.TenantID.String(), g.Definition, g.Rule, g.As)
	}
}
