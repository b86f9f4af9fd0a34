package shell

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
)

// flowMetrics count flow control's decisions by kind of rule and
// outcome, fixed sets both: never a key, which comes from outside.
type flowMetrics struct {
	decisions *prometheus.CounterVec
}

func newFlowMetrics() *flowMetrics {
	m := &flowMetrics{decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ductor_flow_decisions_total",
		Help: "Flow control's decisions on starts and steps, by rule (concurrency, debounce, throttle, rate_limit, step) and outcome (started, queued, held, joined, admitted, refused, cancelled, delayed).",
	}, []string{"rule", "outcome"})}
	for k, outcomes := range flowOutcomes {
		for _, o := range outcomes {
			m.decisions.WithLabelValues(string(k), o) // at 0 from the start
		}
	}
	return m
}

// flowOutcomes are the decisions each kind of rule makes.
var flowOutcomes = map[flowcontrol.Kind][]string{
	flowcontrol.KindConcurrency: {"started", "queued", "admitted", "refused", "cancelled"},
	flowcontrol.KindDebounce:    {"held", "joined"},
	flowcontrol.KindThrottle:    {"held"},
	flowcontrol.KindRateLimit:   {"refused"},
	flowcontrol.KindStep:        {"delayed"},
}

// decided counts a decision, or notes it in ctx's tally (WithFlowTally),
// to be counted once the transaction that made it is done with.
func (m *flowMetrics) decided(ctx context.Context, k flowcontrol.Kind, outcome string) {
	if t, ok := ctx.Value(flowTallyKey{}).(*FlowTally); ok {
		t.mu.Lock()
		t.seen = append(t.seen, [2]string{string(k), outcome})
		t.mu.Unlock()
		return
	}
	m.decisions.WithLabelValues(string(k), outcome).Inc()
}

// FlowTally holds the decisions of a transaction that may be rolled back
// and tried again (a start whose inline tick failed, a tick that lost a
// race), so that a decision made again is counted once.
type FlowTally struct {
	mu   sync.Mutex
	seen [][2]string
}

type flowTallyKey struct{}

// WithFlowTally returns ctx noting flow decisions in a tally of its own.
func WithFlowTally(ctx context.Context) (context.Context, *FlowTally) {
	t := &FlowTally{}
	return context.WithValue(ctx, flowTallyKey{}, t), t
}

// reset forgets the decisions of an attempt that is tried again.
func (t *FlowTally) Reset() {
	t.mu.Lock()
	t.seen = t.seen[:0]
	t.mu.Unlock()
}

// count counts the tally's decisions and empties it.
func (m *flowMetrics) count(t *FlowTally) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range t.seen {
		m.decisions.WithLabelValues(d[0], d[1]).Inc()
	}
	t.seen = nil
}

var flowRunsDesc = prometheus.NewDesc("ductor_flow_runs",
	"Runs under a flow control rule, by tenant, definition, rule (concurrency[N], debounce, throttle) and state: running (holding a concurrency slot) or queued (held back).",
	[]string{"tenant_id", "definition", "rule", "state"}, nil)

var flowStepsDesc = prometheus.NewDesc("ductor_flow_step_attempts",
	"Step attempts under concurrency pools, by tenant and state: running (admitted, not finished) or queued (held back by their pool).",
	[]string{"tenant_id", "state"}, nil)

// flowCollector reads the runs under each rule from Postgres when
// scraped, so that every replica reports the same numbers. Its labels
// are the tenant, the definition and the rule's place in it, never a key.
type flowCollector struct{ c *deps }

func (f *flowCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- flowRunsDesc
	ch <- flowStepsDesc
}

func (f *flowCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s := store.New(f.c.pool)
	gauges, err := s.FlowGauges(ctx)
	if err != nil {
		f.failed(err)
		return
	}
	seen := map[[4]string]int{}
	for _, g := range gauges {
		seen[[4]string{g.TenantID.String(), f.c.metrics.definitions.value(g.TenantID, g.Definition), g.Rule, g.As}] += g.Runs
	}
	for l, n := range seen {
		ch <- prometheus.MustNewConstMetric(flowRunsDesc, prometheus.GaugeValue, float64(n), l[0], l[1], l[2], l[3])
	}
	steps, err := s.FlowStepGauges(ctx)
	if err != nil {
		f.failed(err)
		return
	}
	for _, g := range steps {
		ch <- prometheus.MustNewConstMetric(flowStepsDesc, prometheus.GaugeValue, float64(g.Running), g.TenantID.String(), "running")
		ch <- prometheus.MustNewConstMetric(flowStepsDesc, prometheus.GaugeValue, float64(g.Queued), g.TenantID.String(), "queued")
	}
}

// failed counts and logs a scrape whose flow control queries failed; its
// series are missing from that scrape.
func (f *flowCollector) failed(err error) {
	f.c.metrics.scrapeFails.WithLabelValues("flow").Inc()
	f.c.log.Warn("metrics scrape query failed", "collector", "flow", "err", err)
}
