package flowcontrol

import (
	"context"
	"fmt"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

// Evaluator evaluates one expression (engine.Evaluator has this shape).
type Evaluator interface {
	Eval(ctx context.Context, src string, kind expr.Kind, vars expr.Vars) (any, error)
}

// Slot is a run's key under one concurrency rule.
type Slot struct {
	Rule     int
	Pool     string
	Key      string
	Limit    int
	Strategy definition.Strategy
}

// Window is a start's key under a throttle or a rate limit.
type Window struct {
	Pool, Key string
	Limit     int
	Period    time.Duration
}

// Quiet is a start's key under a debounce.
type Quiet struct {
	Pool, Key       string
	Period, MaxWait time.Duration
}

// Keys are what one start of a definition is under.
type Keys struct {
	Slots     []Slot
	Debounce  *Quiet
	Throttle  *Window
	RateLimit *Window
}

// FieldError is a rule's expression that could not give a key or a
// limit for a start: the start is refused, naming the field.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Evaluate computes the keys (and evaluated limits) of a start of m, its
// expressions seeing vars (input, and run with its subject and search
// attributes). Stages ask for part of them: a debounced start is keyed
// by its debounce and rate limit first (StageStart), and once its key
// is quiet by its throttle and concurrency rules (StageRelease), on the
// input it ends with.
func Evaluate(ctx context.Context, ev Evaluator, m *definition.Manifest, vars expr.Vars, st Stage) (Keys, error) {
	e := evaluation{ctx: ctx, ev: ev, vars: vars, def: m.Key}
	var k Keys
	if st&StageStart != 0 {
		k.RateLimit = e.window(KindRateLimit, "rate_limit", m.RateLimit)
		if d := m.Debounce; d != nil {
			key := e.key("debounce.key_expr", d.KeyExpr)
			k.Debounce = &Quiet{Pool: Pool(KindDebounce, m.Key, d.KeyExpr), Key: key,
				Period: ms(d.PeriodMS), MaxWait: ms(d.MaxWaitMS)}
		}
	}
	if st&StageRelease != 0 {
		k.Throttle = e.window(KindThrottle, "throttle", m.Throttle)
		for i, r := range m.Concurrency {
			k.Slots = append(k.Slots, e.slot(m.Key, i, r))
		}
	}
	return k, e.err
}

// Stage selects the rules Evaluate keys.
type Stage int

const (
	// StageStart: the rate limit and the debounce, met when the start
	// is asked for.
	StageStart Stage = 1 << iota
	// StageRelease: the throttle and the concurrency rules, met once a
	// debounce (if any) has let the run go.
	StageRelease
	// StageAll is both, for a start without a debounce.
	StageAll = StageStart | StageRelease
)

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// evaluation keeps the first error.
type evaluation struct {
	ctx  context.Context
	ev   Evaluator
	vars expr.Vars
	def  string
	err  error
}

func (e *evaluation) key(field, src string) string {
	if src == "" || e.err != nil {
		return ""
	}
	v, err := e.ev.Eval(e.ctx, src, expr.KindAny, e.vars)
	if err == nil {
		var s string
		if s, err = KeyText(v); err == nil {
			return s
		}
	}
	e.err = &FieldError{Field: field, Err: err}
	return ""
}

func (e *evaluation) limit(field string, n int, src string) int {
	if src == "" || e.err != nil {
		return n
	}
	v, err := e.ev.Eval(e.ctx, src, expr.KindInt, e.vars)
	if err == nil {
		if n, err = LimitOf(v); err == nil {
			return n
		}
	}
	e.err = &FieldError{Field: field, Err: err}
	return 0
}

func (e *evaluation) window(k Kind, field string, r *definition.Rate) *Window {
	if r == nil {
		return nil
	}
	key := e.key(field+".key_expr", r.KeyExpr)
	return &Window{Pool: Pool(k, e.def, r.KeyExpr), Key: key, Limit: r.Limit, Period: ms(r.PeriodMS)}
}

func (e *evaluation) slot(def string, i int, r definition.ConcurrencyRule) Slot {
	field := fmt.Sprintf("concurrency[%d]", i)
	return Slot{
		Rule: i, Pool: Pool(KindConcurrency, def, r.KeyExpr), Strategy: r.Strategy,
		Key:   e.key(field+".key_expr", r.KeyExpr),
		Limit: e.limit(field+".limit", r.Limit, r.LimitExpr),
	}
}
