package shell

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/telemetry"
)

// bridgeTier labels the bridge workers' tasks in the step metrics: they
// wait in no tier's queue, and their handlers are tenant data.
const bridgeTier = "bridge"

// polled counts a bridge poll and how long its tasks waited to be claimed.
func (c *Observer) Polled(tasks []store.BridgeTask, err error) {
	switch {
	case err != nil:
		c.metrics.polls.WithLabelValues(outcome(err)).Inc()
	case len(tasks) == 0:
		c.metrics.polls.WithLabelValues("empty").Inc()
	default:
		c.metrics.polls.WithLabelValues("tasks").Inc()
	}
	for _, t := range tasks {
		c.metrics.claimed.Inc()
		if t.ClaimedAt != nil {
			wait := t.ClaimedAt.Sub(t.CreatedAt).Seconds()
			c.metrics.queueWait.WithLabelValues(bridgeTier, "task", labelOther).Observe(max(wait, 0))
		}
	}
}

// TaskAnswered counts a bridge task's result and, when it was taken,
// records the attempt's execution time and span: from the claim to now,
// with the span id its worker was handed (telemetry.AttemptSpanID).
func (c *Observer) TaskAnswered(ctx context.Context, t store.BridgeTask, stepErr *engine.Error, err error) {
	verb := "complete"
	if stepErr != nil {
		verb = "fail"
	}
	c.metrics.results.WithLabelValues(verb, outcome(err)).Inc()
	if err != nil || t.ClaimedAt == nil {
		return
	}
	code := "success"
	var spanErr error
	if stepErr != nil {
		code, spanErr = stepErr.Code, errors.New(stepErr.Code)
	}
	c.metrics.stepSeconds.WithLabelValues(bridgeTier, "task", labelOther, outcomeLabel(code)).Observe(time.Since(*t.ClaimedAt).Seconds())
	c.tracing.Record(ctx, t.Trace, telemetry.AttemptSpanID(t.ID), "attempt "+t.Node, *t.ClaimedAt, time.Now(), spanErr,
		attribute.String("ductor.run_id", t.RunID.String()), attribute.String("ductor.node", t.Node),
		attribute.String("ductor.step_type", "task"), attribute.Int("ductor.attempt", t.Attempt),
		attribute.String("ductor.worker_id", t.WorkerID))
}

// published counts an event: created, a duplicate of an earlier one, or
// refused.
func (c *Observer) Published(created bool, err error) {
	switch {
	case err != nil:
		c.metrics.events.WithLabelValues(outcome(err)).Inc()
	case created:
		c.metrics.events.WithLabelValues("created").Inc()
	default:
		c.metrics.events.WithLabelValues("duplicate").Inc()
	}
}
