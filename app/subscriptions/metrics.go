package subscriptions

import "github.com/prometheus/client_golang/prometheus"

// metrics are the deliveries' instruments; every label is bounded.
type metrics struct {
	// deliveries counts attempts by outcome: delivered, retry (failed and
	// to be tried again), failed (out of attempts) and filtered.
	deliveries   *prometheus.CounterVec
	latency      prometheus.Histogram
	disabled     prometheus.Counter
	redeliveries prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_subscription_deliveries_total",
			Help: "Attempts of outbound webhook deliveries, by outcome: delivered, retry, failed (out of attempts) or filtered.",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ductor_subscription_delivery_seconds",
			Help:    "How long receivers of outbound webhooks took to answer.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ductor_subscriptions_disabled_total",
			Help: "Outbound webhook subscriptions disabled after a run of failed deliveries.",
		}),
		redeliveries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ductor_subscription_redeliveries_total",
			Help: "Deliveries sent again by hand.",
		}),
	}
	for _, o := range []string{"delivered", "retry", "failed", "filtered"} {
		m.deliveries.WithLabelValues(o)
	}
	return m
}

// Collectors are the service's metrics for a Prometheus registry.
func (c *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{c.metrics.deliveries, c.metrics.latency, c.metrics.disabled, c.metrics.redeliveries}
}
