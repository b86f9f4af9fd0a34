package definition

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

func goldenDoc(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hashOf(t *testing.T, doc []byte, f Format) string {
	t.Helper()
	c, err := Compile(doc, f)
	if err != nil {
		t.Fatalf("Compile: %v\n%s", err, doc)
	}
	return c.Hash
}

// yamlTree decodes a YAML document into a JSON-shaped tree.
func yamlTree(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestHashSameInYAMLAndJSON(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"order.yaml", "waits.yaml"} {
		doc := goldenDoc(t, name)
		asJSON, err := json.Marshal(yamlTree(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := hashOf(t, doc, FormatYAML), hashOf(t, asJSON, FormatJSON); a != b {
			t.Errorf("%s: YAML hash %s, JSON hash %s", name, a, b)
		}
	}
}

func TestHashIgnoresOrder(t *testing.T) {
	t.Parallel()
	tree := yamlTree(t, goldenDoc(t, "order.yaml"))
	base := hashOf(t, mustJSON(t, tree), FormatJSON)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		shuffle(rng, tree["steps"].([]any))
		shuffle(rng, tree["edges"].([]any))
		doc := reversedKeysJSON(tree, i%2 == 0)
		if got := hashOf(t, doc, FormatJSON); got != base {
			t.Fatalf("shuffle %d: hash %s, want %s\n%s", i, got, base, doc)
		}
	}
}

func shuffle(rng *rand.Rand, xs []any) {
	rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reversedKeysJSON writes objects with their keys in reverse order
// (encoding/json always sorts them).
func reversedKeysJSON(v any, reverse bool) []byte {
	var b bytes.Buffer
	writeOrdered(&b, v, reverse)
	return b.Bytes()
}

func writeOrdered(b *bytes.Buffer, v any, reverse bool) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		if !reverse {
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			writeOrdered(b, x[k], reverse)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeOrdered(b, e, reverse)
		}
		b.WriteByte(']')
	default:
		eb, _ := json.Marshal(x)
		b.Write(eb)
	}
}

func TestHashSameWithExplicitDefaults(t *testing.T) {
	t.Parallel()
	implicit := one(
		`{ref: a, type: task, with: {handler: h}}`,
		`{ref: b, type: http, with: {url: "https://x.test"}}`,
		`{ref: c, type: scatter, with: {items_expr: input.xs, do: {type: task, with: {handler: h}}}}`,
		`{ref: d, type: subworkflow, with: {workflow: w}}`,
		`{ref: e, type: approval, with: {approvers: ["role:x"]}}`,
		`{ref: f, type: human_loop, with: {title: T}}`,
		`{ref: g, type: gather, with: {scatter_ref: c}}`,
		`{ref: i, type: wait, with: {cron: "0 * * * *"}}`,
	) + "edges:\n  - {from: c, to: g}\n"
	retry := `retry: {max_attempts: 3, initial_interval: 1s, backoff_coefficient: 2.0, max_interval: 1m, jitter: true}, timeout: 60s`
	explicit := one(
		`{ref: a, type: task, join: all, on_error: fail, with: {handler: h, queue: default}, `+retry+`}`,
		`{ref: b, type: http, with: {url: "https://x.test", method: GET}, `+retry+`}`,
		`{ref: c, type: scatter, with: {items_expr: input.xs, mode: inline, max_inline_children: 256, do: {type: task, with: {handler: h, queue: default}, `+retry+`}}}`,
		`{ref: d, type: subworkflow, with: {workflow: w, mode: sync, wait_for: terminal, on_timeout: fail_parent}}`,
		`{ref: e, type: approval, with: {approvers: ["role:x"], min_approvals: 1, on_timeout: fail}}`,
		`{ref: f, type: human_loop, with: {title: T, awaiting_status: resolved, on_timeout: fail, assignees: []}}`,
		`{ref: g, type: gather, with: {scatter_ref: c, strategy: partition}}`,
		`{ref: i, type: wait, with: {cron: "0 * * * *", timezone: UTC}}`,
	) + "limits: {max_inline_children: 256, transitions_soft: 10000, transitions_hard: 50000, transitions_terminate: 60000}\n" +
		"edges:\n  - {from: c, to: g, on: success}\n"
	if a, b := hashOf(t, []byte(implicit), FormatYAML), hashOf(t, []byte(explicit), FormatYAML); a != b {
		t.Errorf("implicit %s != explicit %s", a, b)
	}
}

func TestHashSameForEquivalentSpellings(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{`{ref: a, type: wait, with: {duration: 90s}}`, `{ref: a, type: wait, with: {duration: PT90S}}`, `{ref: a, type: wait, with: {duration: 1m30s}}`},
		{`{ref: a, type: http, with: {url: "https://x.test", method: post}}`, `{ref: a, type: http, with: {url: "https://x.test", method: POST}}`},
		{`{ref: a, type: wait, with: {until: "2030-01-01T02:00:00+02:00"}}`, `{ref: a, type: wait, with: {until: "2030-01-01T00:00:00Z"}}`},
		{`{ref: a, type: task, with: {handler: h}, retry: {backoff_coefficient: 2}}`, `{ref: a, type: task, with: {handler: h}, retry: {backoff_coefficient: 2.0}}`},
		{`{ref: a, type: http, with: {url: "https://x.test", expect_status: 200}}`, `{ref: a, type: http, with: {url: "https://x.test", expect_status: [200]}}`},
	}
	for _, g := range groups {
		first := hashOf(t, []byte(one(g[0])), FormatYAML)
		for _, s := range g[1:] {
			if h := hashOf(t, []byte(one(s)), FormatYAML); h != first {
				t.Errorf("%s and %s hash differently", g[0], s)
			}
		}
	}
}

func TestHashChangesWithMeaning(t *testing.T) {
	t.Parallel()
	base := string(goldenDoc(t, "order.yaml"))
	baseHash := hashOf(t, []byte(base), FormatYAML)
	changes := []struct{ old, new string }{
		{"key: order-fulfilment", "key: order-fulfilment-2"},
		{"name: Order fulfilment", "name: Order fulfilment!"},
		{"timeout: 72h", "timeout: 71h"},
		{"max_inline_children: 500", "max_inline_children: 501"},
		{"'{\"ok\": input.amount > 0}'", "'{\"ok\": input.amount >= 0}'"},
		{"run_if: 'input.amount != 0'", "run_if: 'input.amount != 1'"},
		{"method: post", "method: put"},
		{"max_attempts: 5", "max_attempts: 4"},
		{"timeout: 30s", "timeout: 31s"},
		{"on_error: continue", "on_error: fail"},
		{"handler: payments.refund, queue: payments", "handler: payments.refund, queue: other"},
		{"join: any", "join: all"},
		{"duration: 1m", "duration: 2m"},
		{"timezone: Europe/Paris", "timezone: Europe/Berlin"},
		{"{ from: charge, to: refund, on: error }", "{ from: charge, to: refund, on: done }"},
		{"{ from: check, to: reject, on: false }", "{ from: check, to: reject, on: error }"},
		{`- { when: 'input.tier == "gold"', to: gold }
      - { when: 'input.tier == "silver"', to: silver }`, `- { when: 'input.tier == "silver"', to: silver }
      - { when: 'input.tier == "gold"', to: gold }`},
		{"tier: {type: string}", "tier: {type: integer}"},
		{"output_expr: '{\"charged\": steps.charge.output}'", "output_expr: '{\"charged\": steps.charge}'"},
	}
	seen := map[string]string{baseHash: "base"}
	for _, ch := range changes {
		if !strings.Contains(base, ch.old) {
			t.Fatalf("base document lacks %q", ch.old)
		}
		h := hashOf(t, []byte(strings.Replace(base, ch.old, ch.new, 1)), FormatYAML)
		if prev, dup := seen[h]; dup {
			t.Errorf("changing %q to %q hashes like %s", ch.old, ch.new, prev)
		}
		seen[h] = ch.new
	}
}

func TestDefinitionMarshalsToTheDocument(t *testing.T) {
	t.Parallel()
	jitter := false
	d := Definition{
		Key:         "order-fulfilment",
		Name:        "Order fulfilment",
		InputSchema: map[string]any{"type": "object"},
		Steps: []StepDef{
			Transform("validate", `{"ok": input.amount > 0}`),
			Condition("check", "steps.validate.output.ok"),
			Task("charge", "payments.charge").Set("input_expr", "input").
				WithRetry(RetryDef{MaxAttempts: 5, InitialInterval: "2s", Jitter: &jitter}),
			Wait("later", "PT1H"),
			Signal("go", "go").Set("timeout", "1h"),
			HTTP("gold", "POST", "https://x.test/gold"),
			NewStep("silver", TypeTask, With{"handler": "h"}),
		},
		Edges: []EdgeDef{
			Then("validate", "check"),
			On("check", "charge", OutcomeTrue),
			On("check", "later", OutcomeFalse),
			Then("later", "go"),
			Choose("charge", When(`input.tier == "gold"`, "gold"), Otherwise("silver")),
		},
	}
	yamlDoc := `
key: order-fulfilment
name: Order fulfilment
input_schema: {type: object}
steps:
  - {ref: validate, type: transform, with: {expr: '{"ok": input.amount > 0}'}}
  - {ref: check, type: condition, with: {expr: steps.validate.output.ok}}
  - {ref: charge, type: task, with: {handler: payments.charge, input_expr: input}, retry: {max_attempts: 5, initial_interval: 2s, jitter: false}}
  - {ref: later, type: wait, with: {duration: PT1H}}
  - {ref: go, type: signal, with: {name: go, timeout: 1h}}
  - {ref: gold, type: http, with: {method: POST, url: "https://x.test/gold"}}
  - {ref: silver, type: task, with: {handler: h}}
edges:
  - {from: validate, to: check}
  - {from: check, to: charge, on: "true"}
  - {from: check, to: later, on: "false"}
  - {from: later, to: go}
  - from: charge
    choice: [{when: 'input.tier == "gold"', to: gold}, {default: true, to: silver}]
`
	c, err := NewCompiler(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	fromGo, err := c.CompileDefinition(&d)
	if err != nil {
		t.Fatal(err)
	}
	if h := hashOf(t, []byte(yamlDoc), FormatYAML); h != fromGo.Hash {
		t.Errorf("Go value hashes %s, YAML %s", fromGo.Hash, h)
	}
}

func TestHashMatchesCompiled(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, string(goldenDoc(t, "waits.yaml")))
	h, err := Hash(c.Manifest)
	if err != nil || h != c.Hash {
		t.Fatalf("Hash = %s, %v; want %s", h, err, c.Hash)
	}
	// A manifest read back from its canonical JSON hashes the same.
	var m Manifest
	if err := json.Unmarshal(c.JSON, &m); err != nil {
		t.Fatal(err)
	}
	if h, _ := Hash(&m); h != c.Hash {
		t.Errorf("round-tripped manifest hashes %s, want %s", h, c.Hash)
	}
}
