package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/app/webhook"
)

// triggerIsolationCases gives tenant A a schedule and a webhook, and says
// what tenant B's key gets on each route.
func triggerIsolationCases(t *testing.T, b *apiBundle) (map[string]isolationCase, []string) {
	t.Helper()
	b.publish(t, noopManifest("hidden", "only"))
	if code, body := b.call(t, "POST", "/api/v1/schedules", b.keyA, `{"id": "hidden-sched", "definition": "hidden", "spec": {"interval": "1h"}}`); code != 201 {
		t.Fatalf("create schedule: %d %v", code, body)
	}
	code, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "hidden-hook", "event": "hidden.event"}`)
	if code != 201 {
		t.Fatalf("create webhook: %d %v", code, hook)
	}
	s, w := "/api/v1/schedules/hidden-sched", "/api/v1/webhooks/hidden-hook"
	return map[string]isolationCase{
		"POST /api/v1/schedules":              {"/api/v1/schedules", `{"definition": "hidden", "spec": {"interval": "1h"}}`, 404},
		"GET /api/v1/schedules":               {"/api/v1/schedules", "", 200},
		"GET /api/v1/schedules/:id":           {s, "", 404},
		"PATCH /api/v1/schedules/:id":         {s, `{"paused": true}`, 404},
		"DELETE /api/v1/schedules/:id":        {s, "", 404},
		"POST /api/v1/schedules/:id/trigger":  {s + "/trigger", "", 404},
		"POST /api/v1/schedules/:id/backfill": {s + "/backfill", `{"from": "2024-01-01T00:00:00Z", "to": "2024-01-02T00:00:00Z"}`, 404},
		"POST /api/v1/webhooks":               {"/api/v1/webhooks", `{"id": "b-hook", "event": "b.event"}`, 201},
		"GET /api/v1/webhooks":                {"/api/v1/webhooks", "", 200},
		"GET /api/v1/webhooks/:id":            {w, "", 404},
		"GET /api/v1/webhooks/:id/deliveries": {w + "/deliveries", "", 404},
		"POST /api/v1/webhooks/:id/rotate":    {w + "/rotate", "", 404},
		"DELETE /api/v1/webhooks/:id":         {w, "", 404},
	}, []string{"hidden.event", hook["secret"].(string), hook["secret_hint"].(string)}
}

func TestSchedulesAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("tick", "a"))
	code, sc := b.call(t, "POST", "/api/v1/schedules", b.keyA, `{"id": "hourly", "definition": "tick", "spec": {"cron": "0 * * * *", "timezone": "Europe/Paris"}, "input": {"n": 1}}`)
	if code != 201 || sc["next_run_at"] == nil || sc["overlap"] != "skip" || sc["catchup_window"] != "1h" {
		t.Fatalf("create = %d %v", code, sc)
	}
	if code, body := b.call(t, "POST", "/api/v1/schedules", b.keyA, `{"id": "hourly", "definition": "tick", "spec": {"interval": "1h"}}`); code != 409 {
		t.Errorf("same id again = %d %v", code, body)
	}
	if code, body := b.call(t, "POST", "/api/v1/schedules", b.keyA, `{"definition": "tick", "spec": {"interval": "10ms"}}`); code != 422 || !strings.Contains(fmt.Sprint(body), "spec.interval") {
		t.Errorf("a 10ms interval = %d %v", code, body)
	}
	if code, body := b.call(t, "POST", "/api/v1/schedules", b.keyA, `{"definition": "nope", "spec": {"interval": "1h"}}`); code != 404 {
		t.Errorf("an unknown definition = %d %v", code, body)
	}
	code, trig := b.call(t, "POST", "/api/v1/schedules/hourly/trigger", b.keyA, "")
	action, _ := trig["action"].(map[string]any)
	if code != 200 || action["run_id"] == nil || action["source"] != "trigger" {
		t.Fatalf("trigger = %d %v", code, trig)
	}
	b.waitStatus(t, action["run_id"].(string))
	_, run := b.call(t, "GET", "/api/v1/runs/"+action["run_id"].(string), b.keyA, "")
	if attrs := run["search_attributes"].(map[string]any); attrs["schedule_id"] != "hourly" || attrs["scheduled_at"] == nil {
		t.Errorf("run attributes = %v", attrs)
	}
	code, bf := b.call(t, "POST", "/api/v1/schedules/hourly/backfill", b.keyA, `{"from": "2024-05-01T00:00:00Z", "to": "2024-05-01T03:00:00Z", "overlap": "allow_all"}`)
	if acts, _ := bf["actions"].([]any); code != 200 || len(acts) != 3 {
		t.Errorf("backfill = %d %v", code, bf)
	}
	code, paused := b.call(t, "PATCH", "/api/v1/schedules/hourly", b.keyA, `{"paused": true, "note": "holiday"}`)
	if code != 200 || paused["paused"] != true || paused["note"] != "holiday" {
		t.Errorf("pause = %d %v", code, paused)
	}
	code, got := b.call(t, "GET", "/api/v1/schedules/hourly", b.keyA, "")
	if recent, _ := got["recent_actions"].([]any); code != 200 || len(recent) != 4 || got["last_action"] == nil {
		t.Errorf("get = %d %v", code, got)
	}
	if code, list := b.call(t, "GET", "/api/v1/schedules?limit=1", b.keyA, ""); code != 200 || len(list["schedules"].([]any)) != 1 {
		t.Errorf("list = %d %v", code, list)
	}
	if code, _ := b.call(t, "DELETE", "/api/v1/schedules/hourly", b.keyA, ""); code != 200 {
		t.Errorf("delete = %d", code)
	}
	if code, _ := b.call(t, "GET", "/api/v1/schedules/hourly", b.keyA, ""); code != 404 {
		t.Errorf("get after delete = %d", code)
	}
}

// A schedule a definition declares changes only by its document: the API
// may pause it, not change or delete it.
func TestDeclaredScheduleThroughTheAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	doc := `{"key": "decl", "steps": [{"ref": "a", "type": "task", "with": {"handler": "builtin.noop"}}], "triggers": [{"schedule": {"id": "decl-daily", "cron": "@daily"}}]}`
	if code, body := b.call(t, "POST", "/api/v1/definitions/decl/versions", b.keyA, doc); code != 201 {
		t.Fatalf("publish = %d %v", code, body)
	}
	if code, sc := b.call(t, "GET", "/api/v1/schedules/decl-daily", b.keyA, ""); code != 200 || sc["owned"] != true {
		t.Fatalf("declared schedule = %d %v", code, sc)
	}
	if code, _ := b.call(t, "PATCH", "/api/v1/schedules/decl-daily", b.keyA, `{"spec": {"interval": "1m"}}`); code != 409 {
		t.Errorf("changing a declared schedule's spec = %d, want 409", code)
	}
	if code, _ := b.call(t, "PATCH", "/api/v1/schedules/decl-daily", b.keyA, `{"paused": true}`); code != 200 {
		t.Errorf("pausing a declared schedule = %d", code)
	}
	if code, _ := b.call(t, "DELETE", "/api/v1/schedules/decl-daily", b.keyA, ""); code != 409 {
		t.Errorf("deleting a declared schedule = %d, want 409", code)
	}
}

// deliver posts a body to a webhook URL with headers.
func deliver(t *testing.T, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

func signed(secret, id string, at time.Time, body string) map[string]string {
	ts := at.Unix()
	return map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(ts, 10), "webhook-signature": webhook.SignStandard(secret, id, ts, []byte(body))}
}

// A signed delivery becomes an event that starts the definition it
// triggers; a forged or stale one is 401; a replay is accepted once.
func TestWebhookDeliveryStartsARun(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	testdb.Definition(t, b.store, b.tenantA.ID, "key: on-hook\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - {event: order.placed, filter_expr: 'event.total > 0.0'}\n")
	code, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "shop", "event": "order.placed"}`)
	secret, _ := hook["secret"].(string)
	if code != 201 || !strings.HasPrefix(secret, "whsec_") || !strings.HasSuffix(hook["url"].(string), "/hooks/"+b.tenantA.Slug+"/shop") {
		t.Fatalf("create = %d %v", code, hook)
	}
	url := b.srv.URL + "/hooks/" + b.tenantA.Slug + "/shop"
	now, err := b.store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"total": 12.5, "id": "o-1"}`
	if code, out := deliver(t, url, body, signed(secret, "msg_1", now, body)); code != 202 {
		t.Fatalf("signed delivery = %d %s", code, out)
	}
	if code, out := deliver(t, url, body, signed(secret, "msg_1", now, body)); code != 200 || !strings.Contains(out, `"duplicate":true`) {
		t.Errorf("replay = %d %s", code, out)
	}
	forged := signed("whsec_"+strings.Repeat("A", 43)+"=", "msg_2", now, body)
	if code, _ := deliver(t, url, body, forged); code != 401 {
		t.Errorf("forged delivery = %d, want 401", code)
	}
	if code, _ := deliver(t, url, body, nil); code != 401 {
		t.Errorf("unsigned delivery = %d, want 401", code)
	}
	if code, _ := deliver(t, url, body, signed(secret, "msg_3", now.Add(-6*time.Minute), body)); code != 401 {
		t.Errorf("stale delivery = %d, want 401", code)
	}
	if code, _ := deliver(t, b.srv.URL+"/hooks/"+b.tenantA.Slug+"/nope", body, signed(secret, "msg_4", now, body)); code != 404 {
		t.Errorf("unknown webhook = %d, want 404", code)
	}
	runs, err := b.store.RunList(context.Background(), b.tenantA.ID, store.RunFilter{Definition: "on-hook", Limit: 10})
	if err != nil || len(runs) != 1 || runs[0].State.Input.(map[string]any)["id"] != "o-1" {
		t.Fatalf("runs = %+v, %v; want one with the delivery's body", runs, err)
	}
	// The first failure after a success is written; the two after it are
	// counted with the next write.
	_, got := b.call(t, "GET", "/api/v1/webhooks/shop", b.keyA, "")
	if last, _ := got["last_delivery"].(map[string]any); last["outcome"] != "bad_signature" || got["deliveries"] != 3.0 || got["secret"] != nil {
		t.Errorf("webhook after deliveries = %v", got)
	}
	_, rotated := b.call(t, "POST", "/api/v1/webhooks/shop/rotate", b.keyA, "")
	fresh, _ := rotated["secret"].(string)
	if fresh == "" || fresh == secret {
		t.Fatalf("rotate = %v", rotated)
	}
	for i, s := range []string{fresh, secret} { // the old one during its grace
		if code, out := deliver(t, url, body, signed(s, fmt.Sprintf("msg_r%d", i), now, body)); code != 202 {
			t.Errorf("delivery signed with secret %d after rotation = %d %s", i, code, out)
		}
	}
	if _, got := b.call(t, "GET", "/api/v1/webhooks/shop", b.keyA, ""); got["deliveries"] != 7.0 {
		t.Errorf("deliveries after two more = %v, want 7 (every one counted)", got["deliveries"])
	}
}

// A delivery id already accepted is a duplicate only with the same body
// (the same JSON, however it is spaced); with another body it is refused
// with 409 and starts nothing.
func TestWebhookDeliveryIDReusedWithAnotherBodyIsRefused(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	testdb.Definition(t, b.store, b.tenantA.ID, "key: on-reuse\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - {event: order.reused}\n")
	_, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "reuse", "event": "order.reused"}`)
	secret, _ := hook["secret"].(string)
	url := b.srv.URL + "/hooks/" + b.tenantA.Slug + "/reuse"
	now, err := b.store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first, respaced, other := `{"id": "o-1", "total": 3}`, `{"total":3,"id":"o-1"}`, `{"id": "o-2", "total": 3}`
	if code, out := deliver(t, url, first, signed(secret, "msg_1", now, first)); code != 202 {
		t.Fatalf("first delivery = %d %s", code, out)
	}
	if code, out := deliver(t, url, respaced, signed(secret, "msg_1", now, respaced)); code != 200 || !strings.Contains(out, `"duplicate":true`) {
		t.Errorf("the same body respaced = %d %s, want 200 duplicate", code, out)
	}
	code, out := deliver(t, url, other, signed(secret, "msg_1", now, other))
	if code != 409 || !strings.Contains(out, `"idempotency_mismatch"`) {
		t.Errorf("another body under the same id = %d %s, want 409 idempotency_mismatch", code, out)
	}
	_, got := b.call(t, "GET", "/api/v1/webhooks/reuse", b.keyA, "")
	if last, _ := got["last_delivery"].(map[string]any); last["outcome"] != "id_reused" || last["status"] != 409.0 {
		t.Errorf("last delivery = %v, want id_reused 409", got["last_delivery"])
	}
	runs, err := b.store.RunList(context.Background(), b.tenantA.ID, store.RunFilter{Definition: "on-reuse", Limit: 10})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %d, %v; want only the first delivery's", len(runs), err)
	}
}

func TestGitHubWebhook(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	_, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "gh", "event": "github.push", "scheme": "github"}`)
	secret := hook["secret"].(string)
	url := b.srv.URL + "/hooks/" + b.tenantA.Slug + "/gh"
	body := `{"ref": "refs/heads/main"}`
	h := map[string]string{"X-Hub-Signature-256": webhook.SignGitHub(secret, []byte(body)), "X-GitHub-Delivery": "d-1"}
	if code, out := deliver(t, url, body, h); code != 202 {
		t.Fatalf("GitHub delivery = %d %s", code, out)
	}
	h["X-Hub-Signature-256"] = webhook.SignGitHub("wrong", []byte(body))
	if code, _ := deliver(t, url, body, h); code != 401 {
		t.Errorf("wrong GitHub signature = %d", code)
	}
}

// A schedule's input is checked again when it fires: after the definition
// is republished with a schema its input no longer fits, each action is a
// failed action naming why, starts no run and, with pause_on_failure,
// pauses the schedule.
func TestScheduleInputCheckedWhenItFires(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	const v1 = "key: greet\ninput_schema: {type: object, properties: {n: {type: integer}}}\nsteps:\n  - {ref: a, type: transform, with: {expr: 'input'}}\n"
	const v2 = "key: greet\ninput_schema: {type: object, required: [name], properties: {name: {type: string}}}\nsteps:\n  - {ref: a, type: transform, with: {expr: 'input.name'}}\n"
	testdb.Definition(t, b.store, b.tenantA.ID, v1)
	for _, sc := range []string{
		`{"id": "greet-now", "definition": "greet", "spec": {"interval": "1h"}, "input": {"n": 1}}`,
		`{"id": "greet-often", "definition": "greet", "spec": {"interval": "1s"}, "input": {"n": 1}, "pause_on_failure": true}`,
	} {
		if code, body := b.call(t, "POST", "/api/v1/schedules", b.keyA, sc); code != 201 {
			t.Fatalf("create = %d %v", code, body)
		}
	}
	testdb.Definition(t, b.store, b.tenantA.ID, v2)

	code, trig := b.call(t, "POST", "/api/v1/schedules/greet-now/trigger", b.keyA, "")
	action, _ := trig["action"].(map[string]any)
	if code != 200 || action["status"] != "not_started" || action["run_id"] != nil || !strings.Contains(fmt.Sprint(action["error"]), "missing property 'name'") {
		t.Fatalf("trigger = %d %v, want a not_started action naming the missing property", code, trig)
	}

	var got map[string]any
	testwait.Until(context.Background(), 20*time.Second, func() bool {
		if _, err := b.runs.Runs.Schedules.Once(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, got = b.call(t, "GET", "/api/v1/schedules/greet-often", b.keyA, "")
		return got["paused"] == true
	})
	last, _ := got["last_action"].(map[string]any)
	if got["paused"] != true || !strings.Contains(fmt.Sprint(got["note"]), "input_schema") {
		t.Fatalf("schedule = %v, want paused with a note naming the input_schema", got)
	}
	if last["status"] != "not_started" || last["source"] != "schedule" || !strings.Contains(fmt.Sprint(last["error"]), "input_schema") {
		t.Errorf("last action = %v, want not_started with the validation message", last)
	}
	if recent, _ := got["recent_actions"].([]any); len(recent) != 1 {
		t.Errorf("recent actions = %v, want the one that paused it", recent)
	}
	runs, err := b.store.RunList(context.Background(), b.tenantA.ID, store.RunFilter{Definition: "greet", Limit: 10})
	if err != nil || len(runs) != 0 {
		t.Errorf("runs = %d (%v), want none", len(runs), err)
	}
}

// Runs an event's triggers start join the trace of the request that
// published it, through POST /events or a webhook delivery, as a run
// started with POST /runs joins its caller's.
func TestTriggeredRunsJoinThePublishersTrace(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	testdb.Definition(t, b.store, b.tenantA.ID, "key: on-traced\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\ntriggers:\n  - {event: traced.event}\n")
	const caller = "4bf92f3577b34da6a3ce929d0e0e4736"
	parent := map[string]string{"traceparent": "00-" + caller + "-00f067aa0ba902b7-01"}
	if code, out := b.callWith(t, "POST", "/api/v1/events", b.keyA, `{"name": "traced.event", "data": {"via": "api"}}`, parent); code != 202 {
		t.Fatalf("POST /events = %d %v", code, out)
	}
	_, hook := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "traced", "event": "traced.event"}`)
	now, err := b.store.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"via": "hook"}`
	headers := signed(hook["secret"].(string), "msg_t", now, body)
	headers["traceparent"] = parent["traceparent"]
	if code, out := deliver(t, b.srv.URL+"/hooks/"+b.tenantA.Slug+"/traced", body, headers); code != 202 {
		t.Fatalf("delivery = %d %s", code, out)
	}
	if code, out := b.call(t, "POST", "/api/v1/events", b.keyA, `{"name": "traced.event", "data": {"via": "untraced"}}`); code != 202 {
		t.Fatalf("POST /events = %d %v", code, out)
	}
	runs, err := b.store.RunList(context.Background(), b.tenantA.ID, store.RunFilter{Definition: "on-traced", Limit: 10})
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs = %d, %v; want 3", len(runs), err)
	}
	for _, r := range runs {
		_, got := b.call(t, "GET", "/api/v1/runs/"+r.ID.String(), b.keyA, "")
		via := r.State.Input.(map[string]any)["via"]
		if joined := got["trace_id"] == caller; joined != (via != "untraced") {
			t.Errorf("run started by the %v event has trace_id %v (caller's %s)", via, got["trace_id"], caller)
		}
	}
}
