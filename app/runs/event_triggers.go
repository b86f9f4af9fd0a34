package runs

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/sysevents"
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

// evaluatedTrigger is an event trigger with the outcome of its filter and
// input, found before the event's transaction begins.
type evaluatedTrigger struct {
	trigger store.EventTrigger
	input   any
	match   bool
	err     error
}

// evalTriggers reads the triggers of an event's name and evaluates their
// filter and input expressions, outside any transaction: an expression
// runs for up to its time limit, and no database connection may wait on
// it idle in a transaction. `now` is the time the event is published.
func (c *Events) evalTriggers(ctx context.Context, e store.Event) ([]evaluatedTrigger, error) {
	triggers, err := store.New(c.pool).EventTriggersFor(ctx, e.TenantID, e.Name)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	out := make([]evaluatedTrigger, 0, len(triggers))
	for _, t := range triggers {
		input, match, err := evalTrigger(ctx, t, e.Data, now)
		if err != nil && !isExprError(err) {
			return nil, err
		}
		out = append(out, evaluatedTrigger{trigger: t, input: input, match: match, err: err})
	}
	return out, nil
}

// startTriggered starts the runs an event's triggers ask for, in the
// transaction that stores the event, from the outcomes evalTriggers found
// before it: one run of the newest published version per (event,
// trigger) whose filter passes, keyed by both so a retry starts nothing
// twice. A filter or input that fails to evaluate is no match: recorded
// on the trigger and counted, never an error of the event.
func (c *Events) startTriggered(ctx context.Context, tx pgx.Tx, e store.Event, triggers []evaluatedTrigger) error {
	s := store.New(tx)
	for _, t := range triggers {
		if err := c.startOneTriggered(ctx, tx, s, t, e); err != nil {
			return err
		}
	}
	return nil
}

func (c *Events) startOneTriggered(ctx context.Context, tx pgx.Tx, s *store.Store, et evaluatedTrigger, e store.Event) error {
	t, match, evalErr := et.trigger, et.match, et.err
	if evalErr == nil && match {
		evalErr = c.startFromEvent(ctx, tx, s, t, e, et.input)
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

func (c *Events) startFromEvent(ctx context.Context, tx pgx.Tx, s *store.Store, t store.EventTrigger, e store.Event, input any) error {
	attrs := map[string]any{"event_id": e.ID.String(), "event": e.Name}
	for k, v := range sysevents.ChildAttributes(e.Name, e.Data) {
		attrs[k] = v
	}
	_, created, err := c.startTx(ctx, tx, Trigger{
		TenantID: e.TenantID, Definition: t.Definition, Input: input,
		SearchAttributes: attrs,
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
// its input (default: the event's data), with `event` the event's data.
// An expression's failure names the field that holds it.
func evalTrigger(ctx context.Context, t store.EventTrigger, data any, now time.Time) (input any, match bool, err error) {
	cache, err := triggerExprs()
	if err != nil {
		return nil, false, err
	}
	vars := expr.Vars{Event: data, Now: now}
	if t.FilterExpr != "" {
		p, err := cache.Get(t.FilterExpr, expr.KindBool)
		if err != nil {
			return nil, false, triggerExprError(err, "filter_expr")
		}
		if match, err = p.EvalBool(ctx, vars); err != nil || !match {
			return nil, false, triggerExprError(err, "filter_expr")
		}
	}
	if t.InputExpr == "" {
		return data, true, nil
	}
	p, err := cache.Get(t.InputExpr, expr.KindAny)
	if err != nil {
		return nil, false, triggerExprError(err, "input_expr")
	}
	if input, err = p.Eval(ctx, vars); err != nil {
		return nil, false, triggerExprError(err, "input_expr")
	}
	if input, err = jsonvalue.Normalize(input); err != nil {
		return nil, false, &expr.Error{Message: "input_expr: " + err.Error(), Code: expr.CodeExpressionError}
	}
	return input, true, nil
}

// triggerExprError names the trigger's field in an expression's error.
func triggerExprError(err error, field string) error {
	var e *expr.Error
	if errors.As(err, &e) {
		return e.WithLocation("", field)
	}
	return err
}

func isExprError(err error) bool {
	var e *expr.Error
	return errors.As(err, &e) && !errors.Is(err, expr.ErrInterrupted)
}
