package shell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/telemetry"
)

// What a run's life shows an operator: one log line when a run starts and
// when it ends, and one per failed attempt (saying whether it is retried);
// the metrics of runs and attempts; a span per tick, and the run's own
// span when it ends. Lines carry ids, names, codes and durations, never
// payloads (inputs, outputs, error messages), which may hold secrets.

// runAttrs are the log attributes naming a run.
func runAttrs(r store.Run) []any {
	return []any{"tenant_id", r.TenantID, "run_id", r.ID, "definition", r.DefinitionKey, "trace_id", telemetry.TraceID(r.State.Trace)}
}

// RunStarted logs and counts a run that was just created.
func (c *Observer) RunStarted(ctx context.Context, r store.Run) {
	c.metrics.started.WithLabelValues(c.metrics.definitions.value(r.TenantID, r.DefinitionKey)).Inc()
	attrs := append(runAttrs(r), "version", r.DefinitionVersion)
	if r.ParentRunID != nil {
		attrs = append(attrs, "parent_run_id", *r.ParentRunID)
	}
	if r.ContinuedFromRunID != nil {
		attrs = append(attrs, "continued_from_run_id", *r.ContinuedFromRunID)
	}
	c.log.InfoContext(ctx, "run started", attrs...)
}

// observeTicks reports what tickRuns decided once it returns without
// error: the ticks' spans, the runs that ended and the attempts that
// failed. (A transaction that rolls back afterwards reports a tick that
// will be decided again, as the metrics always did.)
func (c *Observer) observeTicks(ctx context.Context, ticks []*runTick, begun time.Time, err *error) {
	if *err != nil {
		return
	}
	end := time.Now()
	for _, t := range ticks {
		if t.err != nil || t.state == nil {
			continue
		}
		run := t.load.Run
		if c.tracing.Enabled() {
			c.tracing.Record(ctx, run.State.Trace, trace.SpanID{}, "tick", begun, end, nil,
				attribute.String("ductor.run_id", run.ID.String()), attribute.Int("ductor.inputs", len(t.pending.Inputs)),
				attribute.Int("ductor.decisions", len(t.decisions)))
		}
		c.observeAttempts(ctx, t)
		if t.state.Run.Status.Terminal() && !run.Status.Terminal() {
			c.runEnded(ctx, run, t.state.Run)
		}
	}
}

// runEnded logs, counts and records the span of a run that just ended.
func (c *Observer) runEnded(ctx context.Context, run store.Run, now engine.Run) {
	c.metrics.finished.WithLabelValues(c.metrics.definitions.value(run.TenantID, run.DefinitionKey), statusLabel(now.Status)).Inc()
	took := now.FinishedAt.Sub(run.CreatedAt)
	attrs := append(runAttrs(run), "status", now.Status, "duration_ms", took.Milliseconds())
	if now.Reason != "" {
		attrs = append(attrs, "reason", now.Reason)
	}
	var runErr error
	if now.Error != nil {
		attrs = append(attrs, "error_code", now.Error.Code)
		runErr = errors.New(now.Error.Code)
	}
	level := slog.LevelInfo
	if now.Status != engine.RunSucceeded && now.Status != engine.RunTerminated {
		level = slog.LevelWarn
	}
	c.log.Log(ctx, level, "run ended", attrs...)
	c.tracing.EndRun(ctx, run.State.Trace, "run "+run.DefinitionKey, run.CreatedAt, now.FinishedAt, runErr,
		attribute.String("ductor.run_id", run.ID.String()), attribute.String("ductor.tenant_id", run.TenantID.String()),
		attribute.String("ductor.definition", run.DefinitionKey), attribute.String("ductor.status", string(now.Status)))
}

// observeAttempts counts the attempts a tick finished and logs the failed
// ones: retried when the same decisions dispatch the next attempt.
func (c *Observer) observeAttempts(ctx context.Context, t *runTick) {
	for _, d := range t.decisions {
		if len(d.Attempts) == 0 {
			continue
		}
		types := stepTypes(t.m, d)
		retries := map[string]engine.DispatchAttempt{}
		for _, cmd := range d.Commands {
			if da, ok := cmd.(engine.DispatchAttempt); ok {
				retries[da.Node] = da
			}
		}
		for _, a := range d.Attempts {
			typ := stepTypeLabel(types(a.Node))
			if a.Error == nil {
				c.metrics.attempts.WithLabelValues(typ, "succeeded").Inc()
				continue
			}
			c.metrics.attempts.WithLabelValues(typ, "failed").Inc()
			next, retried := retries[a.Node]
			retried = retried && next.Attempt > a.Attempt
			if retried {
				c.metrics.retries.WithLabelValues(typ).Inc()
			}
			c.attemptFailed(ctx, t, a, next, retried)
		}
	}
}

func (c *Observer) attemptFailed(ctx context.Context, t *runTick, a engine.Attempt, next engine.DispatchAttempt, retried bool) {
	attrs := append(runAttrs(t.load.Run), "node", a.Node, "attempt", a.Attempt, "error_code", a.Error.Code,
		"retryable", a.Error.Retryable)
	if !a.StartedAt.IsZero() {
		attrs = append(attrs, "duration_ms", a.FinishedAt.Sub(a.StartedAt).Milliseconds())
	}
	msg := "attempt failed"
	if retried {
		msg = "attempt failed; retrying"
		attrs = append(attrs, "retry_in_ms", max(next.RunAt.Sub(t.load.Now), 0).Milliseconds())
	}
	c.log.WarnContext(ctx, msg, attrs...)
}

// stepTypes returns the type of the step a node (or scatter child) of
// the decision runs.
func stepTypes(m *definition.Manifest, d *engine.Decision) func(node string) string {
	refs := make(map[string]string, len(d.Nodes))
	for _, n := range d.Nodes {
		refs[n.ID] = n.Ref
	}
	types := map[string]string{}
	if m != nil {
		for _, st := range m.Steps {
			types[st.Ref] = childType(st)
		}
	}
	return func(node string) string {
		ref, ok := refs[node]
		if !ok {
			ref = node
		}
		if typ, ok := types[ref]; ok {
			return typ
		}
		return labelOther
	}
}

// childType is a step's type, or for a scatter the type of its children.
func childType(st definition.Step) string {
	if do, ok := st.With["do"].(map[string]any); ok && st.Type == definition.TypeScatter {
		if typ, ok := do["type"].(string); ok {
			return typ
		}
	}
	return string(st.Type)
}

// processID names this process among the workers: host:pid.
func processID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}

// attemptBegins starts the span of step attempt a, dispatched to queue at
// created (its job's, or a local step's start), that a worker is about to
// execute, as a child of its run's, and records how long it waited; done
// ends the span and records the execution time.
func (c *Observer) attemptBegins(ctx context.Context, queue string, created time.Time, a StepArgs) (context.Context, func(*engine.Error)) {
	tier, typ, handler := tierOf(queue), stepTypeLabel(a.Type), c.handlerLabel(a.Type, a.Params)
	started := time.Now()
	c.metrics.queueWait.WithLabelValues(tier, typ, handler).Observe(max(started.Sub(created), 0).Seconds())
	ctx, span := c.tracing.Start(ctx, a.Trace, "attempt "+a.Ref, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("ductor.run_id", a.RunID.String()), attribute.String("ductor.node", a.Node),
		attribute.String("ductor.step_type", a.Type), attribute.Int("ductor.attempt", a.Attempt)))
	return ctx, func(stepErr *engine.Error) {
		outcome := "success"
		if stepErr != nil {
			outcome = stepErr.Code
			span.SetStatus(codes.Error, stepErr.Code)
		}
		span.End()
		c.metrics.stepSeconds.WithLabelValues(tier, typ, handler, outcomeLabel(outcome)).Observe(time.Since(started).Seconds())
	}
}
