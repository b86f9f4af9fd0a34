package runs

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/telemetry"
)

// triggerMetrics count what schedules, event triggers and webhooks did.
// Labels are fixed sets of outcomes, never names from outside.
type triggerMetrics struct {
	actions       *prometheus.CounterVec
	eventTriggers *prometheus.CounterVec
	webhooks      *prometheus.CounterVec
}

func newTriggerMetrics() *triggerMetrics {
	m := &triggerMetrics{
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_schedule_actions_total",
			Help: "Schedule actions by outcome: started, buffered, skipped (overlap policy) or missed (older than the catchup window).",
		}, []string{"outcome"}),
		eventTriggers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_event_trigger_evaluations_total",
			Help: "Event triggers evaluated for an event, by outcome: started, no_match or error (a filter or input that failed: no match).",
		}, []string{"outcome"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_webhook_deliveries_total",
			Help: "Inbound webhook deliveries by outcome: accepted, duplicate, id_reused (a delivery id already used for another body), bad_signature, stale_timestamp, invalid_body, too_large, not_found, rate_limited (a failure past its budget).",
		}, []string{"outcome"}),
	}
	m.init()
	return m
}

// Each outcome's series exists from the start, at 0, so that a rate
// shows 0 rather than nothing and dashboards and alerts find them.
var (
	scheduleOutcomes     = []string{"started", "buffered", "skipped", "missed"}
	eventTriggerOutcomes = []string{"started", "no_match", "error"}
	webhookOutcomes      = []string{"accepted", "duplicate", "id_reused", "bad_signature", "stale_timestamp", "invalid_body", "too_large", "not_found", "rate_limited"}
)

func (m *triggerMetrics) init() {
	telemetry.InitSeries(m.actions, scheduleOutcomes)
	telemetry.InitSeries(m.eventTriggers, eventTriggerOutcomes)
	telemetry.InitSeries(m.webhooks, webhookOutcomes)
}

func (m *triggerMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.actions, m.eventTriggers, m.webhooks}
}

func (m *triggerMetrics) scheduleActions(a store.Advance, buffered int) {
	m.add(m.actions, "started", a.Actions)
	m.add(m.actions, "buffered", int64(buffered))
	m.add(m.actions, "skipped", a.Skipped)
	m.add(m.actions, "missed", a.Missed)
}

func (m *triggerMetrics) add(v *prometheus.CounterVec, outcome string, n int64) {
	if n > 0 {
		v.WithLabelValues(outcome).Add(float64(n))
	}
}

// WebhookDelivered counts an inbound webhook delivery by its outcome.
func (c *Events) WebhookDelivered(outcome string) {
	c.triggers.webhooks.WithLabelValues(outcome).Inc()
}
