package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testwait"
)

// flowCall starts or reads through the API and returns the status, the
// Retry-After header and the body, checked against openapi.json.
func (b *apiBundle) flowCall(t *testing.T, a answerSchemas, route, path, body string) (int, string, map[string]any) {
	t.Helper()
	method, _, _ := strings.Cut(route, " ")
	req, _ := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+b.keyA)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %d %q is not a JSON object", method, path, res.StatusCode, raw)
	}
	var generic any = out
	a.check(t, route, res.StatusCode, res.Header.Get("Content-Type"), generic)
	return res.StatusCode, res.Header.Get("Retry-After"), out
}

func (b *apiBundle) publishFlow(t *testing.T, key, doc string) {
	t.Helper()
	if code, body := b.send(t, "POST", "/api/v1/definitions/"+key+"/versions", b.keyA, "application/yaml", doc); code != http.StatusCreated {
		t.Fatalf("publish %s: %d %v", key, code, body)
	}
}

// Flow control through the API: 409 concurrency_limit from a
// cancel_newest rule, 429 with Retry-After from a rate limit, a queued
// run showing what it waits for and how many runs wait before it, and
// a start joining a debounce answered with the pending run it joined.
func TestFlowControlAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	a := newAnswerSchemas(t, loadOpenAPI(t))
	b.publishFlow(t, "single", "key: single\nconcurrency: [{limit: 1, strategy: cancel_newest}]\nsteps: [{ref: gate, type: signal, with: {name: go}}]\n")
	b.publishFlow(t, "queued", "key: queued\nconcurrency: [{key_expr: input.user, limit: 1}]\nsteps: [{ref: gate, type: signal, with: {name: go}}]\n")
	b.publishFlow(t, "limited", "key: limited\nrate_limit: {limit: 1, period: 1h}\nsteps: [{ref: t, type: transform, with: {expr: '1'}}]\n")
	b.publishFlow(t, "quiet", "key: quiet\ndebounce: {key_expr: input.user, period: 1h}\nsteps: [{ref: t, type: transform, with: {expr: input.n}}]\n")

	start := func(def, input string) (int, string, map[string]any) {
		return b.flowCall(t, a, "POST /api/v1/runs", "/api/v1/runs", `{"definition": "`+def+`", "input": `+input+`}`)
	}
	if code, _, _ := start("single", "{}"); code != http.StatusCreated {
		t.Fatalf("first start = %d", code)
	}
	code, _, body := start("single", "{}")
	e, _ := body["error"].(map[string]any)
	details, _ := e["details"].(map[string]any)
	if code != http.StatusConflict || e["code"] != "concurrency_limit" || details["rule"] != "concurrency[0]" {
		t.Errorf("a start over a cancel_newest rule = %d %v, want 409 concurrency_limit naming the rule", code, body)
	}

	if code, _, _ := start("limited", "{}"); code != http.StatusCreated {
		t.Fatalf("first limited start = %d", code)
	}
	code, retry, body := start("limited", "{}")
	secs, _ := strconv.Atoi(retry)
	if e, _ := body["error"].(map[string]any); code != http.StatusTooManyRequests || e["code"] != "rate_limited" || secs < 3500 || secs > 3600 {
		t.Errorf("a start over the rate limit = %d, Retry-After %q, %v; want 429 rate_limited, about an hour", code, retry, body)
	}

	_, _, first := start("queued", `{"user": "ada"}`)
	_, _, second := start("queued", `{"user": "ada"}`)
	_, _, third := start("queued", `{"user": "ada"}`)
	if second["status"] != "pending" {
		t.Fatalf("the second run of a key allowing one is %v, want pending", second["status"])
	}
	b.waitRunFlow(t, a, first["id"].(string), func(run map[string]any) bool { return run["status"] == "waiting" })
	run := b.waitRunFlow(t, a, third["id"].(string), func(run map[string]any) bool { return run["waiting_for"] != nil })
	w := run["waiting_for"].(map[string]any)
	rules := w["rules"].([]any)
	rule := rules[0].(map[string]any)
	if w["stage"] != "concurrency" || rule["rule"] != "concurrency[0]" || rule["key"] != "ada" || rule["limit"] != 1.0 || rule["ahead"] != 1.0 {
		t.Errorf("the third run waits for %v, want a slot of key ada under concurrency[0], one run ahead", w)
	}

	code, _, joined := start("quiet", `{"user": "u", "n": 1}`)
	code2, _, again := start("quiet", `{"user": "u", "n": 2}`)
	if code != http.StatusCreated || code2 != http.StatusOK || joined["id"] != again["id"] || again["status"] != "pending" {
		t.Errorf("two debounced starts = %d %v, %d %v; want 201 then 200 with the same pending run", code, joined, code2, again)
	}
	run = b.waitRunFlow(t, a, joined["id"].(string), func(map[string]any) bool { return true })
	if w, _ := run["waiting_for"].(map[string]any); w["stage"] != "debounce" || w["until"] == nil || run["input"].(map[string]any)["n"] != 2.0 {
		t.Errorf("the debounced run = %v, want it waiting for its key's quiet with the last input", run)
	}
}

// waitRunFlow polls a run through the API until done holds.
func (b *apiBundle) waitRunFlow(t *testing.T, a answerSchemas, id string, done func(map[string]any) bool) map[string]any {
	t.Helper()
	var run map[string]any
	if !testwait.Until(context.Background(), 20*time.Second, func() bool {
		_, _, run = b.flowCall(t, a, "GET /api/v1/runs/{id}", "/api/v1/runs/"+id, "")
		return done(run)
	}) {
		t.Fatalf("run %s: %v", id, run)
	}
	return run
}

// A step attempt its concurrency pool holds back says so on its node.
func TestFlowSlotWaitOnANode(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	a := newAnswerSchemas(t, loadOpenAPI(t))
	b.publishFlow(t, "pooled", `key: pooled
steps:
  - {ref: call, type: task, for_each: input.items, concurrency: {key_expr: '"vendor"', limit: 1}, with: {handler: builtin.sleep, input_expr: '{"ms": 400}'}}
`)
	_, _, run := b.flowCall(t, a, "POST /api/v1/runs", "/api/v1/runs", `{"definition": "pooled", "input": {"items": [1, 2, 3]}}`)
	id := run["id"].(string)
	var page map[string]any
	if !testwait.Until(context.Background(), 20*time.Second, func() bool {
		_, _, page = b.flowCall(t, a, "GET /api/v1/runs/{id}/nodes/{node}/children", "/api/v1/runs/"+id+"/nodes/call/children", "")
		for _, c := range page["children"].([]any) {
			if w, ok := c.(map[string]any)["waiting_for_slot"].(map[string]any); ok {
				if w["key"] != "vendor" || w["limit"] != 1.0 {
					t.Fatalf("waiting_for_slot = %v", w)
				}
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no child of the pooled step ever waited for a slot: %v", page)
	}
}
