package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/testwait"
)

// Expressions and inputs you can trust, end to end through the API: one
// number model, matching that never fails a run, event_set members,
// no_worker, clear errors for bad bytes and one output cap.

// callRaw is call with the answer decoded by the JSON value model, and
// its bytes.
func (b *apiBundle) callRaw(t *testing.T, method, path, body string) (int, map[string]any, string) {
	t.Helper()
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
	if len(raw) > 0 {
		if err := jsonvalue.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: body %s: %v", method, path, raw, err)
		}
	}
	return res.StatusCode, out, string(raw)
}

func (b *apiBundle) start(t *testing.T, key, input string) string {
	t.Helper()
	code, run, raw := b.callRaw(t, "POST", "/api/v1/runs", fmt.Sprintf(`{"definition": %q, "input": %s}`, key, input))
	if code != http.StatusCreated {
		t.Fatalf("start %s = %d %s", key, code, raw)
	}
	return run["id"].(string)
}

// ended polls the run until it ends and returns it, decoded by the model.
func (b *apiBundle) ended(t *testing.T, id string) (map[string]any, string) {
	t.Helper()
	var run map[string]any
	var raw string
	testwait.Eventually(t, 30*time.Second, "run "+id+" ends", func() bool {
		_, run, raw = b.callRaw(t, "GET", "/api/v1/runs/"+id, "")
		return endedStatus(run["status"])
	})
	return run, raw
}

func nodeError(t *testing.T, run map[string]any, ref string) (code, message string) {
	t.Helper()
	e, _ := nodeOf(t, run, ref)["error"].(map[string]any)
	if e == nil {
		t.Fatalf("node %s has no error: %v", ref, nodeOf(t, run, ref))
	}
	return e["code"].(string), e["message"].(string)
}

func TestAPINumbersKeepTheirKindAcrossTicks(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: numbers
input_schema: {type: object, properties: {v: {type: integer}}}
steps:
  - {ref: first, type: transform, with: {expr: '{"id": input.id, "v": input.v + 1, "price2": input.price * 2, "half": input.v + 0.5, "small": input.v < 2.5}'}}
  - {ref: echo, type: task, with: {handler: builtin.echo, input_expr: steps.first.output}}
  - ref: after
    type: transform
    with: {expr: '{"id": string(steps.echo.output.id), "times": steps.echo.output.v * 10, "third": steps.echo.output.v / 3, "price": steps.echo.output.price2 / 4, "double": type(steps.echo.output.price2) == double}'}
  - {ref: each, type: transform, for_each: input.xs, with: {expr: 'item * 2'}}
edges:
  - {from: first, to: echo}
  - {from: echo, to: after}
`)
	id := b.start(t, "numbers", `{"id": 9007199254740993, "v": 2, "price": 9.5, "xs": [1, 2.5, 3]}`)
	run, raw := b.ended(t, id)
	if run["status"] != "succeeded" {
		t.Fatalf("run %s", raw)
	}
	if in := run["input"].(map[string]any); in["id"] != int64(9007199254740993) || !strings.Contains(raw, `"id":9007199254740993`) {
		t.Errorf("input id came back as %#v", in["id"])
	}
	out := run["output"].(map[string]any)
	after := out["after"].(map[string]any)
	want := map[string]any{"id": "9007199254740993", "times": int64(30), "third": int64(1), "price": 4.75, "double": true}
	for k, v := range want {
		if after[k] != v {
			t.Errorf("after.%s = %#v, want %#v (%s)", k, after[k], v, raw)
		}
	}
	each := out["each"].(map[string]any)
	if r := each["result"].([]any); len(r) != 3 || r[0] != int64(2) || r[1] != 5.0 || r[2] != int64(6) {
		t.Errorf("for_each item * 2 = %v, want [2, 5.0, 6] (errors %v)", r, each["error"])
	}
	if !strings.Contains(raw, `"price2":19.0`) {
		t.Errorf("a double is not written as one: %s", raw)
	}
}

func TestAPIMalformedEventFailsNoRun(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: waits
steps:
  - {ref: paid, type: event, with: {name: order.paid, match_expr: 'event.order == input.order'}}
`)
	one, two := b.start(t, "waits", `{"order": 1}`), b.start(t, "waits", `{"order": 2}`)
	b.waitWaiting(t, one, "paid")
	b.waitWaiting(t, two, "paid")
	if code, _, raw := b.callRaw(t, "POST", "/api/v1/events", `{"name": "order.paid", "data": {}}`); code != http.StatusAccepted {
		t.Fatalf("malformed event = %d %s", code, raw)
	}
	for _, order := range []int{2, 1} {
		body := fmt.Sprintf(`{"name": "order.paid", "data": {"order": %d}}`, order)
		if code, _, raw := b.callRaw(t, "POST", "/api/v1/events", body); code != http.StatusAccepted {
			t.Fatalf("event = %d %s", code, raw)
		}
	}
	for i, id := range []string{one, two} {
		run, raw := b.ended(t, id)
		if run["status"] != "succeeded" || nodeOf(t, run, "paid")["output"].(map[string]any)["order"] != int64(i+1) {
			t.Fatalf("run %d = %s", i+1, raw)
		}
		ds, _ := run["discarded"].([]any)
		if len(ds) != 1 || run["discarded_total"] != int64(1) {
			t.Fatalf("run %d discarded = %v, want the malformed event", i+1, run["discarded"])
		}
		d := ds[0].(map[string]any)
		if d["node"] != "paid" || d["code"] != "match_error" || !strings.Contains(d["reason"].(string), "no such key: order") {
			t.Errorf("discard = %v", d)
		}
	}
}

func TestAPIEventSetMembersShareAName(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: acks
steps:
  - ref: all
    type: event_set
    with:
      events:
        - {name: ack, match_expr: 'event.from == "warehouse"'}
        - {name: ack, match_expr: 'event.from == "billing"'}
        - {name: ack, match_expr: 'event.from == "crm"', key: crm}
`)
	id := b.start(t, "acks", `{}`)
	b.waitWaiting(t, id, "all")
	for _, from := range []string{"crm", "warehouse", "warehouse", "billing"} {
		if code, _, raw := b.callRaw(t, "POST", "/api/v1/events", `{"name": "ack", "data": {"from": "`+from+`"}}`); code != http.StatusAccepted {
			t.Fatalf("event = %d %s", code, raw)
		}
	}
	run, raw := b.ended(t, id)
	if run["status"] != "succeeded" {
		t.Fatalf("run %s", raw)
	}
	out := nodeOf(t, run, "all")["output"].(map[string]any)
	for key, from := range map[string]string{"ack#0": "warehouse", "ack#1": "billing", "crm": "crm"} {
		if m, _ := out[key].(map[string]any); m["from"] != from {
			t.Errorf("output[%s] = %v, want the %s ack (output %v)", key, out[key], from, out)
		}
	}
	if len(out) != 3 {
		t.Errorf("output %v, want three members", out)
	}
}

func TestAPITaskWithoutAWorkerFails(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishYAML(t, `
key: lonely
steps:
  - ref: t
    type: task
    with: {handler: nobody.serves, queue: far, schedule_to_start: 1s}
    retry: {max_attempts: 2, initial_interval: 10ms}
`)
	id := b.start(t, "lonely", `{}`)
	w := b.waitWorker(t, id, "t")
	if w["handler"] != "nobody.serves" || w["queue"] != "far" || w["start_by"] == nil {
		t.Errorf("waiting_for_worker = %v", w)
	}
	run, raw := b.ended(t, id)
	code, msg := nodeError(t, run, "t")
	if run["status"] != "failed" || code != "no_worker" || !strings.Contains(msg, `"nobody.serves"`) || !strings.Contains(msg, `"far"`) {
		t.Fatalf("run = %s", raw)
	}
	if n := nodeOf(t, run, "t"); n["attempt"] != int64(2) || n["waiting_for_worker"] != nil {
		t.Errorf("node = %v, want two attempts (no_worker is retried) and no longer waiting", n)
	}

	// The tenant's setting applies to a step that sets none; the default
	// is five minutes.
	b.publishYAML(t, "key: tenantwide\nsteps:\n  - {ref: t, type: task, with: {handler: nobody.serves, queue: far}, retry: {max_attempts: 1}}\n")
	slow := b.start(t, "tenantwide", `{}`)
	w = b.waitWorker(t, slow, "t")
	since, _ := time.Parse(time.RFC3339Nano, w["since"].(string))
	startBy, _ := time.Parse(time.RFC3339Nano, w["start_by"].(string))
	if d := startBy.Sub(since); d < 4*time.Minute || d > 6*time.Minute {
		t.Errorf("default schedule_to_start = %v, want 5m", d)
	}
}

func TestAPITenantScheduleToStart(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	if _, err := b.store.TenantSetScheduleToStart(context.Background(), b.tenantA.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	b.publishYAML(t, "key: tenantwide\nsteps:\n  - {ref: t, type: task, with: {handler: nobody.serves, queue: far}, retry: {max_attempts: 1}}\n")
	run, raw := b.ended(t, b.start(t, "tenantwide", `{}`))
	if code, _ := nodeError(t, run, "t"); code != "no_worker" {
		t.Fatalf("with the tenant's 1s: %s", raw)
	}
}

// waitWorker polls until the node shows it waits for a worker.
func (b *apiBundle) waitWorker(t *testing.T, id, ref string) map[string]any {
	t.Helper()
	return testwait.Value(t, 20*time.Second, "node "+ref+" waits for a worker", func() (map[string]any, bool) {
		_, run, _ := b.callRaw(t, "GET", "/api/v1/runs/"+id, "")
		if nodes, _ := run["nodes"].([]any); len(nodes) > 0 {
			w, ok := nodeOf(t, run, ref)["waiting_for_worker"].(map[string]any)
			return w, ok
		}
		return nil, false
	})
}

func TestAPIBadBytes(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, "key: nul\nsteps:\n  - {ref: w, type: signal, with: {name: go}}\n  - {ref: t, type: transform, with: {expr: '{\"name\": input.prefix + \"\\u0000\"}'}}\nedges:\n  - {from: w, to: t}\n")
	for _, c := range []struct{ path, body, where string }{
		{"/api/v1/runs", `{"definition": "nul", "input": {"a": ["ok", "x\u0000"]}}`, "input.a[1]"},
		{"/api/v1/events", `{"name": "n", "data": {"k": "\u0000"}}`, "data.k"},
	} {
		code, res, raw := b.callRaw(t, "POST", c.path, c.body)
		e, _ := res["error"].(map[string]any)
		details, _ := e["details"].([]any)
		if code != http.StatusUnprocessableEntity || len(details) != 1 || details[0].(map[string]any)["path"] != c.where {
			t.Errorf("POST %s with a NUL = %d %s, want 422 at %s", c.path, code, raw, c.where)
		}
	}
	id := b.start(t, "nul", `{"prefix": "p"}`)
	b.waitWaiting(t, id, "w")
	code, _, raw := b.callRaw(t, "POST", "/api/v1/runs/"+id+"/signals", `{"request_id": "r1", "name": "go", "payload": {"x": "\u0000"}}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(raw, "payload.x") {
		t.Errorf("signal with a NUL = %d %s", code, raw)
	}
	b.callRaw(t, "POST", "/api/v1/runs/"+id+"/signals", `{"request_id": "r2", "name": "go"}`)
	run, raw := b.ended(t, id)
	if code, msg := nodeError(t, run, "t"); run["status"] != "failed" || code != "invalid_output" || !strings.Contains(msg, "at .name") {
		t.Fatalf("a transform producing a NUL: %s", raw)
	}
}

func TestAPIOutputCap(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, "key: big\nsteps:\n  - {ref: t, type: transform, with: {expr: '[input.s, input.s]'}}\n")
	b.publishYAML(t, "key: bigout\noutput_expr: '[input.s, input.s]'\nsteps:\n  - {ref: t, type: transform, with: {expr: '1'}}\n")
	s := strings.Repeat("x", 600<<10)
	run, raw := b.ended(t, b.start(t, "big", `{"s": "`+s+`"}`))
	if code, _ := nodeError(t, run, "t"); run["status"] != "failed" || code != "payload_too_large" {
		t.Fatalf("a 1.2 MB transform output: %.400s", raw)
	}
	run, raw = b.ended(t, b.start(t, "bigout", `{"s": "`+s+`"}`))
	if e, _ := run["error"].(map[string]any); run["status"] != "failed" || e["code"] != "payload_too_large" {
		t.Fatalf("a 1.2 MB output_expr: %.400s", raw)
	}
}

func TestAPIContinueAsNewOfAnEndedRun(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, "key: quick\nsteps:\n  - {ref: t, type: transform, with: {expr: '1'}}\n")
	b.publishYAML(t, "key: slow\nsteps:\n  - {ref: w, type: signal, with: {name: go}}\n")
	done := b.start(t, "quick", `{}`)
	b.ended(t, done)
	code, _, raw := b.callRaw(t, "POST", "/api/v1/runs/"+done+"/continue-as-new", `{"request_id": "r"}`)
	if code != http.StatusConflict || !strings.Contains(raw, "has ended (succeeded)") {
		t.Fatalf("continue-as-new of an ended run = %d %s, want 409", code, raw)
	}
	live := b.start(t, "slow", `{}`)
	b.waitWaiting(t, live, "w")
	code, first, raw := b.callRaw(t, "POST", "/api/v1/runs/"+live+"/continue-as-new", `{"request_id": "r"}`)
	if code != http.StatusAccepted {
		t.Fatalf("continue-as-new = %d %s", code, raw)
	}
	if run, _ := b.ended(t, live); run["status"] != "terminated" {
		t.Fatalf("run = %v", run)
	}
	code, again, raw := b.callRaw(t, "POST", "/api/v1/runs/"+live+"/continue-as-new", `{"request_id": "r"}`)
	if code != http.StatusAccepted || again["successor_run_id"] != first["successor_run_id"] {
		t.Fatalf("the same request again = %d %s, want 202 with %v", code, raw, first["successor_run_id"])
	}
	if code, _, _ := b.callRaw(t, "GET", "/api/v1/runs/"+first["successor_run_id"].(string), ""); code != http.StatusOK {
		t.Fatalf("successor = %d", code)
	}
}

func TestAPIChildStartFailureReachesTheParent(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, "key: orphan\nsteps:\n  - {ref: c, type: subworkflow, with: {workflow: nowhere}}\n")
	b.publishYAML(t, "key: deep\nsteps:\n  - {ref: c, type: subworkflow, with: {workflow: deep}}\n")
	run, raw := b.ended(t, b.start(t, "orphan", `{}`))
	if code, msg := nodeError(t, run, "c"); code != "workflow_not_found" || !strings.Contains(msg, "nowhere") {
		t.Fatalf("unknown workflow: %s", raw)
	}
	top := b.start(t, "deep", `{}`)
	run, raw = b.ended(t, top)
	if code, msg := nodeError(t, run, "c"); code != "child_failed" || !strings.Contains(msg, "depth_exceeded") {
		t.Fatalf("top of the recursion: %s", raw)
	}
	deepest := top
	for range 40 {
		_, r, _ := b.callRaw(t, "GET", "/api/v1/runs?parent_run_id="+deepest, "")
		kids, _ := r["runs"].([]any)
		if len(kids) == 0 {
			break
		}
		deepest = kids[0].(map[string]any)["id"].(string)
	}
	run, raw = b.ended(t, deepest)
	if code, _ := nodeError(t, run, "c"); code != "depth_exceeded" || run["depth"] != int64(32) {
		t.Fatalf("deepest run: %.600s", raw)
	}
}

func TestAPISoftWarningWhenTheTickEndsTheRun(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, "key: soft\nlimits: {transitions_soft: 3}\nsteps:\n  - {ref: a, type: transform, with: {expr: '1'}}\n  - {ref: b, type: transform, with: {expr: '2'}}\nedges:\n  - {from: a, to: b}\n")
	id := b.start(t, "soft", `{}`)
	if run, _ := b.ended(t, id); run["status"] != "succeeded" {
		t.Fatalf("run %v", run)
	}
	_, h, raw := b.callRaw(t, "GET", "/api/v1/runs/"+id+"/history", "")
	found := false
	for _, tr := range h["transitions"].([]any) {
		if d, _ := tr.(map[string]any)["detail"].(string); strings.HasPrefix(d, "warning transitions_soft") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no soft warning in %s", raw)
	}
}

func TestAPIUnknownBuiltinHandler(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	code, _, raw := b.callRaw(t, "POST", "/api/v1/compile", `{"key": "k", "steps": [{"ref": "a", "type": "task", "with": {"handler": "builtin.slep"}}]}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(raw, `did you mean \"builtin.sleep\"`) {
		t.Fatalf("compile = %d %s", code, raw)
	}
}
