package workers

import (
	"context"
	"errors"
	"go.opentelemetry.io/otel/trace"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

// triggerExprs compiles event triggers' filter and input expressions
// once per process.
var triggerExprs = sync.OnceValues(func() (*expr.Cache, error) {
	env, err := expr.NewEnv()
	if err != nil {
		return nil, err
	}
	return expr.NewCache(env, 1024), nil
})

// startTriggered starts the runs an event's triggers ask for, in the
// transaction that stores the event: one run of the newest published
// version per (event, trigger) whose filter passes, keyed by both so a
// retry starts nothing twice. A filter or input that fails to evaluate is
// no match: recorded on the trigger and counted, never an error of the
// event.
func (c *Coordinator) startTriggered(ctx context.Context, tx pgx.Tx, e store.Event) error {
	s := store.New(tx)
	triggers, err := s.EventTriggersFor(ctx, e.TenantID, e.Name)
	if err != nil {
		return err
	}
	for _, t := range triggers {
		if err := c.startOneTriggered(ctx, tx, s, t, e); err != nil {
			return err
		}
	}
	return nil
}

func (c *Coordinator) startOneTriggered(ctx context.Context, tx pgx.Tx, s *store.Store, t store.EventTrigger, e store.Event) error {
	input, match, evalErr := evalTrigger(ctx, t, e)
	if evalErr == nil && match {
		evalErr = c.startFromEvent(ctx, tx, s, t, e, input)
	}
	switch {
	case evalErr != nil && !notStartable(evalErr) && !isExprError(evalErr):
		return evalErr
	case evalErr != nil:
		c.triggers.eventTriggers.WithLabelValues("error").Inc()
		return s.EventTriggerFailed(ctx, t, evalErr.Error())
	case !match:
		c.triggers.eventTriggers.WithLabelValues("no_match").Inc()
	}
	return nil
}

func (c *Coordinator) startFromEvent(ctx context.Context, tx pgx.Tx, s *store.Store, t store.EventTrigger, e store.Event, input any) error {
	_, created, err := c.startTx(ctx, tx, Trigger{
		TenantID: e.TenantID, Definition: t.Definition, Input: input,
		SearchAttributes: map[string]any{"event_id": e.ID.String(), "event": e.Name},
		IdempotencyKey:   "event:" + e.ID.String() + ":" + strconv.Itoa(t.Position),
		Parent:           trace.SpanContextFromContext(ctx),
	})
	if err != nil || !created {
		return err
	}
	c.triggers.eventTriggers.WithLabelValues("started").Inc()
	return s.EventTriggerStarted(ctx, t)
}

// evalTrigger evaluates the trigger's filter (no filter: a match) and
// its input (default: the event's data), with `event` the event's data
// and `now` the event's time.
func evalTrigger(ctx context.Context, t store.EventTrigger, e store.Event) (input any, match bool, err error) {
	cache, err := triggerExprs()
	if err != nil {
		return nil, false, err
	}
	vars := expr.Vars{Event: e.Data, Now: e.CreatedAt}
	if t.FilterExpr != "" {
		p, err := cache.Get(t.FilterExpr, expr.KindBool)
		if err != nil {
			return nil, false, err
		}
		if match, err = p.EvalBool(ctx, vars); err != nil || !match {
			return nil, false, err
		}
	}
	if t.InputExpr == "" {
		return e.Data, true, nil
	}
	p, err := cache.Get(t.InputExpr, expr.KindAny)
	if err != nil {
		return nil, false, err
	}
	if input, err = p.Eval(ctx, vars); err != nil {
		return nil, false, err
	}
	if input, err = jsonvalue.Normalize(input); err != nil {
		return nil, false, &expr.Error{Message: "input_expr: " + err.Error(), Code: expr.CodeExpressionError}
	}
	return input, true, nil
}

func isExprError(err error) bool {
	var e *expr.Error
	return errors.As(err, &e) && !errors.Is(err, expr.ErrInterrupted)
}
