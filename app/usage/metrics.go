package usage

import (
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the service's instruments. Their labels are bounded: tier
// and quota, and the tenant only when the operator opts in
// (Config.TenantLabels).
type metrics struct {
	tenants  bool
	refusals *prometheus.CounterVec
	warnings *prometheus.CounterVec
	folded   prometheus.Counter
}

func newMetrics(tenants bool) *metrics {
	labels := []string{"tier", "quota"}
	if tenants {
		labels = append(labels, "tenant")
	}
	return &metrics{
		tenants: tenants,
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_usage_quota_refusals_total",
			Help: "Run starts refused because a tenant's quota was used up.",
		}, labels),
		warnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_usage_warnings_total",
			Help: "Usage warnings recorded: a quota past its soft limit, once per tenant, month and quota.",
		}, labels),
		folded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ductor_usage_deltas_folded_total",
			Help: "Metering deltas folded into the usage rollups.",
		}),
	}
}

func (m *metrics) values(tenantID uuid.UUID, tier, quota string) []string {
	if m.tenants {
		return []string{tier, quota, tenantID.String()}
	}
	return []string{tier, quota}
}

func (m *metrics) refused(tenantID uuid.UUID, tier, quota string) {
	m.refusals.WithLabelValues(m.values(tenantID, tier, quota)...).Inc()
}

func (m *metrics) warned(tenantID uuid.UUID, tier, quota string) {
	m.warnings.WithLabelValues(m.values(tenantID, tier, quota)...).Inc()
}

// Collectors are the service's metrics for a Prometheus registry.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.metrics.refusals, s.metrics.warnings, s.metrics.folded}
}
