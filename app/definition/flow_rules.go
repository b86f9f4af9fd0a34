package definition

import (
	"fmt"
	"time"

	"github.com/ductor/ductor/app/expr"
)

// Flow control per key: how many runs of a definition run at once
// (concurrency), how starts coalesce (debounce) and how fast they start
// (throttle, rate_limit), and how many attempts of a task or http step
// run at once across the tenant (a step's concurrency). The compiler
// checks them; package flowcontrol evaluates them and workers enforces them in
// Postgres.

// rules checks a definition's flow control rules and a step's
// concurrency for the checker.
type rules struct{ c *checker }

// Bounds of flow control.
const (
	// MaxConcurrencyRules bounds a definition's concurrency rules.
	MaxConcurrencyRules = 10
	// MaxFlowLimit bounds every limit.
	MaxFlowLimit = 100_000
)

// Strategy is what a run concurrency rule does with a start over its
// limit.
type Strategy string

const (
	// StrategyQueue holds the new run pending until a slot frees, in
	// arrival order.
	StrategyQueue Strategy = "queue"
	// StrategyCancelInProgress cancels the oldest runs of the key so that
	// the new one takes their place.
	StrategyCancelInProgress Strategy = "cancel_in_progress"
	// StrategyCancelNewest refuses the new run.
	StrategyCancelNewest Strategy = "cancel_newest"
)

// ConcurrencyRule bounds the runs of a definition that run at once per
// key. Exactly one of Limit and LimitExpr is set.
type ConcurrencyRule struct {
	// KeyExpr names the key (over input and run); empty: one key for
	// the whole definition.
	KeyExpr   string   `json:"key_expr,omitempty"`
	Limit     int      `json:"limit,omitempty"`
	LimitExpr string   `json:"limit_expr,omitempty"`
	Strategy  Strategy `json:"strategy"`
}

// Debounce coalesces the starts of a key: within PeriodMS of each other
// they make one run, which starts with the last input once the key has
// been quiet for PeriodMS, or MaxWaitMS after the first (0: no bound).
type Debounce struct {
	KeyExpr   string `json:"key_expr,omitempty"`
	PeriodMS  int64  `json:"period_ms"`
	MaxWaitMS int64  `json:"max_wait_ms,omitempty"`
}

// Rate is at most Limit starts of a key in any window of PeriodMS: a
// throttle makes the others wait their turn, a rate limit refuses them.
type Rate struct {
	KeyExpr  string `json:"key_expr,omitempty"`
	Limit    int    `json:"limit"`
	PeriodMS int64  `json:"period_ms"`
}

// StepConcurrency bounds the attempts of a task or http step that run at
// once for a key, counted across every run and definition of the tenant
// whose steps name the same key. Exactly one of Limit and LimitExpr is
// set.
type StepConcurrency struct {
	KeyExpr   string `json:"key_expr"`
	Limit     int    `json:"limit,omitempty"`
	LimitExpr string `json:"limit_expr,omitempty"`
}

// HasFlow reports whether runs of the manifest start under flow control.
func (m *Manifest) HasFlow() bool {
	return len(m.Concurrency) > 0 || m.Debounce != nil || m.Throttle != nil || m.RateLimit != nil
}

var strategyNames = []string{string(StrategyQueue), string(StrategyCancelInProgress), string(StrategyCancelNewest)}

var (
	flowKeyField = Field{Name: "key_expr", Kind: KindExpr, Expr: expr.KindAny, DefaultDoc: "one key for the whole definition",
		Doc: "The key (a string, integer or boolean) over `input` and `run` (its `subject` and `search_attributes`)."}
	limitField = Field{Name: "limit", Kind: KindLimit, Required: true, Min: 1, Max: MaxFlowLimit,
		Doc: "How many at most: an integer, or an expression of type int (`input.tier == \"premium\" ? 10 : 1`)."}
	rateLimitField = Field{Name: "limit", Kind: KindInteger, Required: true, Min: 1, Max: MaxFlowLimit, Doc: "Starts in any window of `period`."}
	periodField    = Field{Name: "period", Kind: KindDuration, Required: true, Doc: "The window."}
)

// ConcurrencyFields are a run concurrency rule's.
var ConcurrencyFields = []Field{
	flowKeyField,
	limitField,
	{Name: "strategy", Kind: KindEnum, Enum: strategyNames, Default: string(StrategyQueue),
		Doc: "Over the limit: `queue` holds the new run pending until a slot frees (in arrival order); `cancel_in_progress` cancels the oldest runs of the key; `cancel_newest` refuses the new run (409 `concurrency_limit`; cancelled when a trigger started it)."},
}

// DebounceFields are a debounce's.
var DebounceFields = []Field{
	flowKeyField,
	{Name: "period", Kind: KindDuration, Required: true,
		Doc: "Starts of a key within this long of each other make one run, with the last input; it starts once the key has been quiet this long."},
	{Name: "max_wait", Kind: KindDuration, DefaultDoc: "none",
		Doc: "The run starts at the latest this long after the first start, however busy the key."},
}

// RateFields are a throttle's and a rate limit's.
var RateFields = []Field{flowKeyField, rateLimitField, periodField}

// StepConcurrencyFields are a step's concurrency.
var StepConcurrencyFields = []Field{
	{Name: "key_expr", Kind: KindExpr, Expr: expr.KindAny, Required: true,
		Doc: "The pool's key (a string, integer or boolean; `input`, `steps`, `run`, and in a scatter's template `item`, `index`, `key`): every step of the tenant naming the same key shares it."},
	limitField,
}

// flowRules reads the document's concurrency, debounce, throttle and
// rate_limit.
func (fr rules) flowRules(o object) {
	c := fr.c
	c.m.Concurrency = fr.concurrencyRules(o)
	if r, ok := fr.flowObject(o, "debounce", DebounceFields); ok {
		d := &Debounce{KeyExpr: flowKey(r)}
		d.PeriodMS = r.durationMS("period", 0)
		d.MaxWaitMS = r.durationMS("max_wait", 0)
		if d.MaxWaitMS > 0 && d.MaxWaitMS < d.PeriodMS {
			r.problem("max_wait", "must not be shorter than period (%s)", msText(d.PeriodMS))
		}
		c.m.Debounce = d
	}
	c.m.Throttle = fr.rate(o, "throttle")
	c.m.RateLimit = fr.rate(o, "rate_limit")
}

func (fr rules) concurrencyRules(o object) []ConcurrencyRule {
	c := fr.c
	list := o.list("concurrency", false)
	if len(list) > MaxConcurrencyRules {
		o.problem("concurrency", "at most %d rules, found %d", MaxConcurrencyRules, len(list))
	}
	var rules []ConcurrencyRule
	keys := map[string]path{}
	for i, v := range list {
		r, ok := c.object(v, o.p.dot("concurrency").at(i), "")
		if !ok {
			continue
		}
		r.knownFields(ConcurrencyFields)
		r.requiredFields(ConcurrencyFields)
		rule := ConcurrencyRule{KeyExpr: flowKey(r), Strategy: Strategy(r.enum("strategy", string(StrategyQueue), strategyNames...))}
		rule.Limit, rule.LimitExpr = r.limit()
		if first, dup := keys[rule.KeyExpr]; dup {
			r.problem("key_expr", "another rule has the same key (%s): give one rule per key", first)
		}
		keys[rule.KeyExpr] = r.p
		rules = append(rules, rule)
	}
	return rules
}

func (fr rules) rate(o object, name string) *Rate {
	r, ok := fr.flowObject(o, name, RateFields)
	if !ok {
		return nil
	}
	return &Rate{KeyExpr: flowKey(r), Limit: int(r.intOr("limit", 0, 1, MaxFlowLimit)), PeriodMS: r.durationMS("period", 0)}
}

// flowObject reads an optional object field through its table, checking
// its required fields.
func (fr rules) flowObject(o object, name string, fs []Field) (object, bool) {
	c := fr.c
	v, present := o.m[name]
	if !present {
		return object{}, false
	}
	r, ok := c.object(v, o.p.dot(name), o.step)
	if !ok {
		return object{}, false
	}
	r.knownFields(fs)
	r.requiredFields(fs)
	return r, true
}

// requiredFields reports the table's required fields that are absent.
func (o object) requiredFields(fs []Field) {
	for _, f := range fs {
		if f.Required && !o.has(f.Name) {
			o.problem(f.Name, "is required")
		}
	}
}

func flowKey(o object) string {
	s, _ := o.expr("key_expr", expr.KindAny)
	return s
}

// limit reads a limit: an integer, or an expression of type int.
func (o object) limit() (int, string) {
	v, present := o.m["limit"]
	if !present {
		return 0, "" // reported as required
	}
	if _, isStr := v.(string); isStr {
		src, _ := o.expr("limit", expr.KindInt)
		return 0, src
	}
	return int(o.intOr("limit", 0, 1, MaxFlowLimit)), ""
}

// stepConcurrency reads a task or http step's (or template's)
// concurrency.
func (fr rules) stepConcurrency(o object, t StepType) *StepConcurrency {
	if !o.has("concurrency") {
		return nil
	}
	if t.Valid() && !t.usesRetry() {
		o.problem("concurrency", "%s", stepConcurrencyProblem(t))
		return nil
	}
	r, ok := fr.flowObject(o, "concurrency", StepConcurrencyFields)
	if !ok {
		return nil
	}
	sc := &StepConcurrency{}
	sc.KeyExpr, _ = r.expr("key_expr", expr.KindAny)
	sc.Limit, sc.LimitExpr = r.limit()
	return sc
}

func stepConcurrencyProblem(t StepType) string {
	if t == TypeScatter {
		return "concurrency {key_expr, limit} applies to task and http steps; a scatter's children take it in do.concurrency, and with.concurrency bounds how many are in flight"
	}
	return fmt.Sprintf("concurrency applies only to task and http steps, not %s", t)
}

// stepConcurrencyMap is a template's concurrency as the manifest keeps
// it in the template's map.
func stepConcurrencyMap(sc *StepConcurrency) map[string]any {
	out := map[string]any{"key_expr": sc.KeyExpr}
	if sc.LimitExpr != "" {
		out["limit_expr"] = sc.LimitExpr
	} else {
		out["limit"] = int64(sc.Limit)
	}
	return out
}

func msText(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }
