package pages

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// flowRules lists the flow control rules of a definition's newest
// published version with what is under each now: runs holding a slot
// (running), runs held back (queued) and keys in use for concurrency
// rules, runs held back for a debounce or a throttle, and, for a step
// pool whose key is the same for every run, its attempts in flight and
// held back across the tenant.
func flowRules(ctx context.Context, s *store.Store, tenantID uuid.UUID, key string, versions []store.VersionSummary) ([]views.FlowRule, error) {
	m, err := newestManifest(ctx, s, tenantID, key, versions)
	if err != nil || m == nil {
		return nil, err
	}
	pools, err := s.FlowPoolCounts(ctx, tenantID, []string{key})
	if err != nil {
		return nil, err
	}
	holds, err := s.FlowHoldCounts(ctx, tenantID, key)
	if err != nil {
		return nil, err
	}
	var out []views.FlowRule
	for i, r := range m.Concurrency {
		p := pools[flowcontrol.Pool(flowcontrol.KindConcurrency, key, r.KeyExpr)]
		out = append(out, views.FlowRule{Rule: fmt.Sprintf("concurrency[%d]", i), Key: keyExprText(r.KeyExpr),
			Limit: limitText(r.Limit, r.LimitExpr), Strategy: string(r.Strategy), Running: p.Running, Queued: p.Waiting, Keys: p.Keys})
	}
	if d := m.Debounce; d != nil {
		limit := "quiet for " + msText(d.PeriodMS)
		if d.MaxWaitMS > 0 {
			limit += ", at most " + msText(d.MaxWaitMS)
		}
		out = append(out, views.FlowRule{Rule: "debounce", Key: keyExprText(d.KeyExpr), Limit: limit, Running: -1, Queued: holds[store.StageDebounce], Keys: -1})
	}
	if r := m.Throttle; r != nil {
		out = append(out, views.FlowRule{Rule: "throttle", Key: keyExprText(r.KeyExpr), Limit: rateText(r), Running: -1, Queued: holds[store.StageThrottle], Keys: -1})
	}
	if r := m.RateLimit; r != nil {
		out = append(out, views.FlowRule{Rule: "rate_limit", Key: keyExprText(r.KeyExpr), Limit: rateText(r), Running: -1, Queued: -1, Keys: -1})
	}
	steps, err := stepPools(ctx, s, tenantID, m)
	return append(out, steps...), err
}

// newestManifest is the manifest of the newest version still published.
func newestManifest(ctx context.Context, s *store.Store, tenantID uuid.UUID, key string, versions []store.VersionSummary) (*definition.Manifest, error) {
	for _, v := range versions {
		if v.UnpublishedAt == nil {
			ver, err := s.DefinitionVersionGet(ctx, tenantID, key, v.Version)
			return ver.Manifest, err
		}
	}
	return nil, nil
}

// stepPools lists the steps' (and scatter templates') concurrency pools.
func stepPools(ctx context.Context, s *store.Store, tenantID uuid.UUID, m *definition.Manifest) ([]views.FlowRule, error) {
	var out []views.FlowRule
	for _, st := range m.Steps {
		c := st.Concurrency
		if do, ok := st.With["do"].(map[string]any); ok && c == nil {
			if sc, ok := do["concurrency"].(map[string]any); ok {
				le, _ := sc["limit_expr"].(string)
				ke, _ := sc["key_expr"].(string)
				c = &definition.StepConcurrency{KeyExpr: ke, Limit: intOf(sc["limit"]), LimitExpr: le}
			}
		}
		if c == nil {
			continue
		}
		r := views.FlowRule{Rule: "step " + st.Ref, Key: c.KeyExpr, Limit: limitText(c.Limit, c.LimitExpr), Strategy: "shared pool", Running: -1, Queued: -1, Keys: -1}
		if key, ok := constantKey(c.KeyExpr); ok {
			var err error
			if r.Running, err = s.StepFlowInFlight(ctx, tenantID, key); err != nil {
				return nil, err
			}
			if r.Queued, err = s.StepFlowQueued(ctx, tenantID, key); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

var keyExprs = sync.OnceValues(func() (*expr.Cache, error) {
	env, err := expr.NewEnv()
	if err != nil {
		return nil, err
	}
	return expr.NewCache(env, 256), nil
})

// constantKey evaluates a pool's key expression with no run: a key that
// reads nothing (`"vendor"`) is the pool's for every run.
func constantKey(src string) (string, bool) {
	cache, err := keyExprs()
	if err != nil {
		return "", false
	}
	p, err := cache.Get(src, expr.KindAny)
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	v, err := p.Eval(ctx, expr.Vars{})
	if err != nil {
		return "", false
	}
	key, err := flowcontrol.KeyText(v)
	return key, err == nil
}

func keyExprText(src string) string {
	if src == "" {
		return "(one key)"
	}
	return src
}

func limitText(n int, src string) string {
	if src != "" {
		return src
	}
	return strconv.Itoa(n)
}

func rateText(r *definition.Rate) string {
	return fmt.Sprintf("%d per %s", r.Limit, msText(r.PeriodMS))
}

// intOf reads a manifest's integer, however it was decoded.
func intOf(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}

func msText(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }
