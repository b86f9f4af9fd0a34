package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

// with reads a step's normalised `with` settings.
type with map[string]any

func (w with) str(k string) string {
	s, _ := w[k].(string)
	return s
}

func (w with) strOr(k, def string) string {
	if s := w.str(k); s != "" {
		return s
	}
	return def
}

func (w with) num(k string) int64 {
	switch v := w[k].(type) {
	case int:
		return int64(v)
	case int64:
		return v
	case float64:
		return int64(v)
	case json.Number:
		i, _ := v.Int64()
		return i
	}
	return 0
}

func (w with) ms(k string) time.Duration { return msDuration(w.num(k)) }

func (w with) strs(k string) []string {
	switch v := w[k].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

func (w with) sub(k string) with {
	m, _ := w[k].(map[string]any)
	return m
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// params copies w for a dispatch, replacing every *_expr field by its
// value under the name without the suffix. The names the expressions
// call secret() with go along as secret_refs: the only secret references
// the step may resolve (expr.SecretCalls).
func (d *decider) params(w with, extra func(*expr.Vars)) (map[string]any, *Error) {
	out := make(map[string]any, len(w))
	var refs []any
	for k, v := range w {
		src, isExpr := v.(string)
		if !strings.HasSuffix(k, "_expr") || !isExpr {
			out[k] = v
			continue
		}
		val, err := d.evalWith(src, extra)
		if err != nil {
			return nil, exprError("with."+k, err)
		}
		out[strings.TrimSuffix(k, "_expr")] = val
		for _, n := range expr.SecretCalls(src) {
			if !slices.Contains(refs, any(n)) {
				refs = append(refs, n)
			}
		}
	}
	if refs != nil {
		slices.SortFunc(refs, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		out[SecretRefsParam] = refs
	}
	return out, nil
}

// SecretRefsParam is the dispatch parameter naming the secrets a step's
// expressions reference.
const SecretRefsParam = "secret_refs"

// retryPolicy is the step's policy with a floor of one attempt.
func retryPolicy(s *definition.Step) definition.RetryPolicy {
	p := s.Retry
	if p.MaxAttempts < 1 {
		p.MaxAttempts = 1
	}
	return p
}

// templatePolicy reads a scatter `do` template's retry, defaulting like
// the compiler does for task and http.
func templatePolicy(t definition.StepType, w with) definition.RetryPolicy {
	if r := w.sub("retry"); r != nil {
		return definition.RetryPolicy{
			MaxAttempts: int(r.num("max_attempts")), InitialIntervalMS: r.num("initial_interval_ms"),
			BackoffCoefficient: floatOf(r["backoff_coefficient"]), MaxIntervalMS: r.num("max_interval_ms"),
			Jitter: r["jitter"] != false,
		}
	}
	if t == definition.TypeTask || t == definition.TypeHTTP {
		return definition.RetryPolicy{MaxAttempts: 3, InitialIntervalMS: 1000, BackoffCoefficient: 2, MaxIntervalMS: 60000, Jitter: true}
	}
	return definition.RetryPolicy{MaxAttempts: 1}
}

func floatOf(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return 0
}
