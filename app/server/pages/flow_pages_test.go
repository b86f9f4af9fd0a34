package pages_test

import (
	"net/http"
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
)

// The definition page lists the newest version's flow control rules
// with live counts, and the inspector says what a held run waits for.
func TestFlowRulesOnTheDefinitionPageAndTheInspector(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: flowy
concurrency: [{key_expr: input.user, limit: 1}]
throttle: {limit: 100, period: 1m}
steps:
  - {ref: gate, type: signal, with: {name: go}}
  - {ref: call, type: task, concurrency: {key_expr: '"vendor"', limit: 3}, with: {handler: builtin.noop}}
edges: [{from: gate, to: call}]
`)
	first := b.start(t, runs.Trigger{Definition: "flowy", Input: map[string]any{"user": "ada"}})
	second := b.start(t, runs.Trigger{Definition: "flowy", Input: map[string]any{"user": "ada"}})
	b.waitStatus(t, first, engine.RunWaiting)
	wantPage(t, "definition page", b.get(b.viewer, "/definitions/flowy/edit"), http.StatusOK,
		`id="flow-rules"`, `data-rule="concurrency[0]"`, `input.user`, `<td data-count="running">1</td><td data-count="queued">1</td><td data-count="keys">1</td>`,
		`data-rule="throttle"`, `100 per 1m0s`, `data-rule="step call"`, `shared pool`)
	wantPage(t, "held run", b.get(b.viewer, "/runs/"+second.String()), http.StatusOK,
		`id="run-flow"`, `a concurrency slot: concurrency[0] key &#34;ada&#34; (limit 1, 0 ahead)`)
}
