package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/testdb"
)

// A key that may manage schedules but not start runs cannot start one
// through any schedule route; a key that may manage webhooks but not
// publish events cannot mint a webhook's secret. Each 403 names the
// scope missing.
func TestScheduleAndWebhookScopesAreNoBackDoor(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("tick", "a"))
	key := func(scopes ...auth.Scope) string {
		_, k := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: scopes})
		return k
	}
	sched := key(auth.ScopeSchedulesWrite, auth.ScopeSchedulesRead)
	hooks := key(auth.ScopeWebhooksWrite, auth.ScopeWebhooksRead)
	if code, body := b.call(t, "POST", "/api/v1/schedules", b.keyA, `{"id": "paused", "definition": "tick", "spec": {"interval": "1h"}, "paused": true}`); code != 201 {
		t.Fatalf("create with an admin key = %d %v", code, body)
	}
	if code, body := b.call(t, "POST", "/api/v1/webhooks", b.keyA, `{"id": "gh", "event": "push"}`); code != 201 {
		t.Fatalf("create a webhook with an admin key = %d %v", code, body)
	}
	s := "/api/v1/schedules/paused"
	for _, tc := range []struct{ what, key, method, path, body, scope string }{
		{"create a schedule", sched, "POST", "/api/v1/schedules", `{"definition": "tick", "spec": {"interval": "1h"}}`, "runs:write"},
		{"unpause a schedule", sched, "PATCH", s, `{"paused": false}`, "runs:write"},
		{"change a schedule's input", sched, "PATCH", s, `{"input": {"n": 2}}`, "runs:write"},
		{"trigger a schedule", sched, "POST", s + "/trigger", "", "runs:write"},
		{"backfill a schedule", sched, "POST", s + "/backfill", `{"from": "2024-01-01T00:00:00Z", "to": "2024-01-01T05:00:00Z"}`, "runs:write"},
		{"create a webhook", hooks, "POST", "/api/v1/webhooks", `{"id": "mine", "event": "deploy"}`, "events:write"},
		{"rotate a webhook's secret", hooks, "POST", "/api/v1/webhooks/gh/rotate", "", "events:write"},
	} {
		code, body := b.call(t, tc.method, tc.path, tc.key, tc.body)
		e, _ := body["error"].(map[string]any)
		if code != http.StatusForbidden || e["code"] != "forbidden" || !strings.Contains(fmt.Sprint(e["message"]), tc.scope) {
			t.Errorf("%s without %s = %d %v, want 403 forbidden naming the scope", tc.what, tc.scope, code, body)
		}
	}
	if _, list := b.call(t, "GET", "/api/v1/runs?definition=tick", b.keyA, ""); len(list["runs"].([]any)) != 0 {
		t.Errorf("runs were started: %v", list["runs"])
	}
	// What starts nothing still works with the narrow scope alone, and
	// both scopes together start runs.
	if code, body := b.call(t, "DELETE", s, sched, ""); code != 200 {
		t.Errorf("delete with schedules:write = %d %v", code, body)
	}
	if code, body := b.call(t, "DELETE", "/api/v1/webhooks/gh", hooks, ""); code != 200 {
		t.Errorf("delete a webhook with webhooks:write = %d %v", code, body)
	}
	both := key(auth.ScopeSchedulesWrite, auth.ScopeRunsWrite)
	if code, body := b.call(t, "POST", "/api/v1/schedules", both, `{"id": "both", "definition": "tick", "spec": {"interval": "1h"}}`); code != 201 {
		t.Errorf("create with schedules:write and runs:write = %d %v", code, body)
	}
	if code, body := b.call(t, "POST", "/api/v1/webhooks", key(auth.ScopeWebhooksWrite, auth.ScopeEventsWrite), `{"id": "both", "event": "x"}`); code != 201 {
		t.Errorf("create a webhook with webhooks:write and events:write = %d %v", code, body)
	}
}

// A backfill costs the key one request of its rate for each time of its
// range: a range over the key's burst is refused outright, one over what
// is left of its budget with 429 and Retry-After.
func TestBackfillIsChargedToTheKeyRate(t *testing.T) {
	t.Parallel()
	b := setupAPI(t, func(d *server.Deps) { d.APIRate = 1 }) // bursts of 2
	b.publish(t, noopManifest("tick", "a"))
	if code, body := b.call(t, "POST", "/api/v1/schedules", b.keyA, `{"id": "hourly", "definition": "tick", "spec": {"cron": "0 * * * *"}, "paused": true}`); code != 201 {
		t.Fatalf("create = %d %v", code, body)
	}
	backfill := func(key string, hours int) (int, map[string]any, http.Header) {
		body := fmt.Sprintf(`{"from": "2024-01-01T00:00:00Z", "to": "2024-01-01T%02d:00:00Z", "overlap": "allow_all"}`, hours)
		code, answer, hdr := b.callHeaders(t, "POST", "/api/v1/schedules/hourly/backfill", key, body)
		return code, answer, hdr
	}
	_, fresh := testdb.APIKey(t, b.store, b.tenantA, nil)
	if code, body, _ := backfill(fresh, 2); code != 200 || len(body["actions"].([]any)) != 2 {
		t.Fatalf("a backfill of two times with a full budget = %d %v", code, body)
	}
	_, k := testdb.APIKey(t, b.store, b.tenantA, nil)
	if code, body, _ := backfill(k, 3); code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(body), "burst of 2") {
		t.Errorf("a backfill of three times, over the burst = %d %v, want 422", code, body)
	}
	code, body, hdr := backfill(k, 2)
	if code != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(fmt.Sprint(body), "backfill of 2 times") {
		t.Errorf("a backfill of two times past the budget left = %d %v (Retry-After %q), want 429", code, body, hdr.Get("Retry-After"))
	}
	_, reader := testdb.APIKey(t, b.store, b.tenantA, nil)
	if _, list := b.call(t, "GET", "/api/v1/runs?definition=tick", reader, ""); len(list["runs"].([]any)) != 2 {
		t.Errorf("%d runs, want the first backfill's 2", len(list["runs"].([]any)))
	}
}

// callHeaders is call that also returns the answer's headers.
func (b *apiBundle) callHeaders(t *testing.T, method, path, key, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: body %s is not a JSON object", method, path, raw)
	}
	return res.StatusCode, out, res.Header
}
