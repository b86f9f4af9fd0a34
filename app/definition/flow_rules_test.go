package definition

import (
	"reflect"
	"testing"
)

func TestFlowRules(t *testing.T) {
	t.Parallel()
	doc := func(rules string) string { return one(taskA) + rules }
	runRules(t, []ruleCase{
		{"every rule", doc(`concurrency:
  - {key_expr: input.user, limit: 1}
  - {key_expr: 'run.subject', limit: 'input.tier == "premium" ? 10 : 1', strategy: cancel_in_progress}
  - {limit: 50, strategy: cancel_newest}
debounce: {key_expr: input.user, period: 5s, max_wait: 1m}
throttle: {key_expr: input.user, limit: 10, period: 1m}
rate_limit: {limit: 100, period: 1h}
`), nil},
		{"no limit", doc("concurrency: [{key_expr: input.user}]\n"), []want{{"concurrency[0].limit", "", "is required"}}},
		{"limit out of range", doc("concurrency: [{limit: 0}, {key_expr: input.a, limit: 1000001}]\n"), []want{
			{"concurrency[0].limit", "", "must be between 1 and 100000, not 0"},
			{"concurrency[1].limit", "", "must be between 1 and 100000"},
		}},
		{"limit of the wrong type", doc("concurrency: [{limit: '\"ten\"'}]\n"), []want{{"concurrency[0].limit", "", "must evaluate to int, not string"}}},
		{"bad key", doc("concurrency: [{key_expr: 'input.user +', limit: 1}]\n"), []want{{"concurrency[0].key_expr", "", "invalid expression"}}},
		{"bad strategy", doc("concurrency: [{limit: 1, strategy: drop}]\n"), []want{{"concurrency[0].strategy", "", `must be one of "queue", "cancel_in_progress", "cancel_newest", not "drop"`}}},
		{"two rules on one key", doc("concurrency: [{key_expr: input.a, limit: 1}, {key_expr: input.a, limit: 2}]\n"),
			[]want{{"concurrency[1].key_expr", "", "another rule has the same key (concurrency[0])"}}},
		{"unknown field", doc("concurrency: [{limit: 1, strategie: queue}]\n"), []want{{"concurrency[0].strategie", "", `did you mean "strategy"?`}}},
		{"not a list", doc("concurrency: {limit: 1}\n"), []want{{"concurrency", "", "must be a list, not an object"}}},
		{"debounce without period", doc("debounce: {key_expr: input.a}\n"), []want{{"debounce.period", "", "is required"}}},
		{"max_wait shorter than period", doc("debounce: {period: 1m, max_wait: 10s}\n"), []want{{"debounce.max_wait", "", "must not be shorter than period (1m0s)"}}},
		{"bad period", doc("throttle: {limit: 1, period: often}\n"), []want{{"throttle.period", "", "invalid duration"}}},
		{"throttle without limit", doc("throttle: {period: 1s}\n"), []want{{"throttle.limit", "", "is required"}}},
		{"rate limit with an expression", doc("rate_limit: {limit: 'input.n', period: 1s}\n"), []want{{"rate_limit.limit", "", "must be an integer"}}},
		{"debounce not an object", doc("debounce: 5s\n"), []want{{"debounce", "", "must be an object, not a string"}}},
	})
}

func TestStepConcurrencyRules(t *testing.T) {
	t.Parallel()
	runRules(t, []ruleCase{
		{"task, http and templates", one(
			`{ref: a, type: task, with: {handler: h}, concurrency: {key_expr: '"vendor"', limit: 2}}`,
			`{ref: b, type: http, with: {url: "https://x.test"}, concurrency: {key_expr: 'input.region', limit: 'input.n'}}`,
			`{ref: c, type: task, for_each: input.xs, with: {handler: h}, concurrency: {key_expr: 'item.vendor', limit: 3}}`,
			`{ref: d, type: scatter, with: {items_expr: input.xs, do: {type: task, with: {handler: h}, concurrency: {key_expr: 'key', limit: 1}}}}`,
		), nil},
		{"on a transform", one(`{ref: a, type: transform, with: {expr: "1"}, concurrency: {key_expr: '"x"', limit: 1}}`),
			[]want{{"steps[0].concurrency", "a", "applies only to task and http steps, not transform"}}},
		{"on a scatter", one(`{ref: a, type: scatter, with: {items_expr: input.xs, do: {type: task, with: {handler: h}}}, concurrency: {key_expr: '"x"', limit: 1}}`),
			[]want{{"steps[0].concurrency", "a", "a scatter's children take it in do.concurrency"}}},
		{"on a transform template", one(`{ref: a, type: scatter, with: {items_expr: input.xs, do: {type: transform, with: {expr: item}, concurrency: {key_expr: '"x"', limit: 1}}}}`),
			[]want{{"steps[0].with.do.concurrency", "a", "applies only to task and http steps, not transform"}}},
		{"no key", one(`{ref: a, type: task, with: {handler: h}, concurrency: {limit: 1}}`),
			[]want{{"steps[0].concurrency.key_expr", "a", "is required"}}},
		{"no limit", one(`{ref: a, type: task, with: {handler: h}, concurrency: {key_expr: '"x"'}}`),
			[]want{{"steps[0].concurrency.limit", "a", "is required"}}},
		{"bad key in a template", one(`{ref: a, type: scatter, with: {items_expr: input.xs, do: {type: http, with: {url: "https://x.test"}, concurrency: {key_expr: 'item +', limit: 1}}}}`),
			[]want{{"steps[0].with.do.concurrency.key_expr", "a", "invalid expression"}}},
	})
}

func TestFlowRulesInTheManifest(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, one(`{ref: a, type: task, with: {handler: h}, concurrency: {key_expr: '"vendor"', limit: 2}}`,
		`{ref: b, type: scatter, with: {items_expr: input.xs, do: {type: task, with: {handler: h}, concurrency: {key_expr: key, limit: 'input.n'}}}}`)+`
concurrency: [{key_expr: input.user, limit: 1}, {limit: 'input.n', strategy: cancel_newest}]
debounce: {period: 5s}
throttle: {key_expr: input.user, limit: 10, period: PT1M}
rate_limit: {limit: 100, period: 1h}
`)
	m := c.Manifest
	wantRules := []ConcurrencyRule{{KeyExpr: "input.user", Limit: 1, Strategy: StrategyQueue}, {LimitExpr: "input.n", Strategy: StrategyCancelNewest}}
	if !reflect.DeepEqual(m.Concurrency, wantRules) {
		t.Errorf("concurrency = %+v", m.Concurrency)
	}
	if *m.Debounce != (Debounce{PeriodMS: 5000}) || *m.Throttle != (Rate{KeyExpr: "input.user", Limit: 10, PeriodMS: 60000}) ||
		*m.RateLimit != (Rate{Limit: 100, PeriodMS: 3600000}) || !m.HasFlow() {
		t.Errorf("debounce %+v, throttle %+v, rate limit %+v", m.Debounce, m.Throttle, m.RateLimit)
	}
	a, _ := m.Step("a")
	if *a.Concurrency != (StepConcurrency{KeyExpr: `"vendor"`, Limit: 2}) {
		t.Errorf("step a's concurrency = %+v", a.Concurrency)
	}
	b, _ := m.Step("b")
	do := b.With["do"].(map[string]any)
	if !reflect.DeepEqual(do["concurrency"], map[string]any{"key_expr": "key", "limit_expr": "input.n"}) {
		t.Errorf("template's concurrency = %v", do["concurrency"])
	}
	plain := mustCompile(t, one(taskA))
	if plain.Manifest.HasFlow() {
		t.Error("a definition without rules has flow control")
	}
	if again := mustCompile(t, one(taskA)+"throttle: {key_expr: input.user, limit: 10, period: 60s}\n"); again.Hash == plain.Hash {
		t.Error("a throttle does not change the hash")
	}
}
