package api

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// AttemptJSON is one attempt of a node: when a worker started it (null
// until one did), when it ended, which worker ran it, and its error.
type AttemptJSON struct {
	Generation int           `json:"generation"`
	Attempt    int           `json:"attempt"`
	StartedAt  *time.Time    `json:"started_at"`
	FinishedAt *time.Time    `json:"finished_at"`
	Worker     string        `json:"worker,omitempty"`
	Error      *engine.Error `json:"error"`
}

// withAttempts adds to each node its attempts, and makes its started_at
// the time its current attempt started on a worker (the tick that
// dispatched it may have run well before: a retry's backoff, a scatter's
// interval_ms, a queue).
func withAttempts(ctx context.Context, s *store.Store, tenantID, runID uuid.UUID, nodes []NodeJSON) ([]NodeJSON, error) {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Node
	}
	records, err := s.RunAttemptsOf(ctx, tenantID, runID, names)
	if err != nil {
		return nil, err
	}
	byNode := map[string][]AttemptJSON{}
	for _, a := range records {
		byNode[a.Node] = append(byNode[a.Node], AttemptJSON{
			Generation: a.Generation, Attempt: a.Attempt.Attempt, StartedAt: timePtr(a.StartedAt),
			FinishedAt: timePtr(a.FinishedAt), Worker: a.Worker, Error: a.Error,
		})
	}
	for i := range nodes {
		nodes[i].Attempts = byNode[nodes[i].Node]
		for _, a := range nodes[i].Attempts {
			if a.Generation == nodes[i].Generation && a.Attempt == nodes[i].Attempt && a.StartedAt != nil {
				nodes[i].StartedAt = a.StartedAt
			}
		}
	}
	return nodes, nil
}

// callerSpan is the span of a request's W3C traceparent header (and its
// tracestate), invalid when it has none.
func callerSpan(c echo.Context) trace.SpanContext {
	ctx := propagation.TraceContext{}.Extract(c.Request().Context(), propagation.HeaderCarrier(c.Request().Header))
	return trace.SpanContextFromContext(ctx)
}
