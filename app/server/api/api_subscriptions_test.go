package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/testdb"
)

// subscriptionAnswerCases call the subscriptions operations, for
// TestOpenAPIDescribesTheAnswers.
func subscriptionAnswerCases(t *testing.T, b *apiBundle) []answerCase {
	t.Helper()
	code, sub := b.call(t, "POST", "/api/v1/subscriptions", b.keyA, `{"url": "https://example.com/hook", "events": ["never.sent"]}`)
	if code != http.StatusCreated {
		t.Fatalf("create subscription: %d %v", code, sub)
	}
	one := "/api/v1/subscriptions/" + sub["id"].(string)
	_, gone := b.call(t, "POST", "/api/v1/subscriptions", b.keyA, `{"url": "https://example.com/gone", "events": ["*"]}`)
	return []answerCase{
		{route: "POST /api/v1/subscriptions", path: "/api/v1/subscriptions", body: `{"url": "https://example.com/h", "events": ["ductor.run.failed"], "filter_expr": "event.definition == 'x'"}`},
		{route: "POST /api/v1/subscriptions", path: "/api/v1/subscriptions", body: `{"url": "ftp://example.com", "events": ["a"]}`},
		{route: "POST /api/v1/subscriptions", path: "/api/v1/subscriptions", body: `{"url": "https://example.com", "events": ["a"], "filter_expr": "1 +"}`},
		{route: "GET /api/v1/subscriptions", path: "/api/v1/subscriptions"},
		{route: "GET /api/v1/subscriptions/{id}", path: one},
		{route: "GET /api/v1/subscriptions/{id}", path: "/api/v1/subscriptions/" + uuid.NewString()},
		{route: "POST /api/v1/subscriptions/{id}/rotate", path: one + "/rotate"},
		{route: "POST /api/v1/subscriptions/{id}/enable", path: one + "/enable"},
		{route: "GET /api/v1/subscriptions/{id}/deliveries", path: one + "/deliveries?limit=5"},
		{route: "GET /api/v1/subscriptions/{id}/deliveries", path: one + "/deliveries?limit=0"},
		{route: "POST /api/v1/subscriptions/{id}/deliveries/{delivery}/redeliver", path: one + "/deliveries/" + uuid.NewString() + "/redeliver"},
		{route: "DELETE /api/v1/subscriptions/{id}", path: "/api/v1/subscriptions/" + gone["id"].(string)},
		{route: "DELETE /api/v1/subscriptions/{id}", path: "/api/v1/subscriptions/" + gone["id"].(string)},
	}
}

// Creating a subscription shows its whsec_ secret once; bad input gets a
// clear error naming the field; another tenant's subscription is not
// found.
func TestSubscriptionsAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	code, sub := b.call(t, "POST", "/api/v1/subscriptions", b.keyA, `{"url": "https://example.com/hook", "events": ["ductor.run.failed"], "description": "pager"}`)
	if code != http.StatusCreated || !strings.HasPrefix(sub["secret"].(string), "whsec_") {
		t.Fatalf("create = %d %v", code, sub)
	}
	id := sub["id"].(string)
	if code, got := b.call(t, "GET", "/api/v1/subscriptions/"+id, b.keyA, ""); code != http.StatusOK || got["secret"] != nil || got["description"] != "pager" {
		t.Errorf("get = %d %v", code, got)
	}
	if code, got := b.call(t, "GET", "/api/v1/subscriptions/"+id, b.keyB, ""); code != http.StatusNotFound {
		t.Errorf("another tenant's get = %d %v", code, got)
	}
	code, rotated := b.call(t, "POST", "/api/v1/subscriptions/"+id+"/rotate", b.keyA, "")
	if code != http.StatusOK || rotated["secret"] == sub["secret"] || rotated["previous_secret_until"] == nil {
		t.Errorf("rotate = %d %v", code, rotated)
	}
	for body, field := range map[string]string{
		`{"events": ["a"]}`: "url",
		`{"url": "https://u:p@example.com", "events": ["a"]}`:                     "url",
		`{"url": "https://example.com", "events": []}`:                            "events",
		`{"url": "https://example.com", "events": ["a"], "filter_expr": "nope("}`: "filter_expr",
	} {
		code, got := b.call(t, "POST", "/api/v1/subscriptions", b.keyA, body)
		e, _ := got["error"].(map[string]any)
		if code != http.StatusBadRequest || !strings.HasPrefix(e["message"].(string), field) {
			t.Errorf("%s = %d %v, want 400 naming %s", body, code, got, field)
		}
	}
	if code, got := b.call(t, "DELETE", "/api/v1/subscriptions/"+id, b.keyA, ""); code != http.StatusOK {
		t.Errorf("delete = %d %v", code, got)
	}
	if code, _ := b.call(t, "GET", "/api/v1/subscriptions/"+id+"/deliveries", b.keyA, ""); code != http.StatusNotFound {
		t.Errorf("deliveries of a deleted subscription = %d", code)
	}
}

// A schedule's action that starts no run emits ductor.schedule.failed.
func TestScheduleNotStartedEmitsScheduleFailed(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	testdb.Definition(t, b.store, b.tenantA.ID, "key: greet2\nsteps:\n  - {ref: a, type: transform, with: {expr: 'input'}}\n")
	if code, body := b.call(t, "POST", "/api/v1/schedules", b.keyA, `{"id": "greet-later", "definition": "greet2", "spec": {"interval": "1h"}, "input": {"n": 1}}`); code != 201 {
		t.Fatalf("create = %d %v", code, body)
	}
	testdb.Definition(t, b.store, b.tenantA.ID, "key: greet2\ninput_schema: {type: object, required: [name]}\nsteps:\n  - {ref: a, type: transform, with: {expr: 'input'}}\n")
	if code, body := b.call(t, "POST", "/api/v1/schedules/greet-later/trigger", b.keyA, ""); code != 200 {
		t.Fatalf("trigger = %d %v", code, body)
	}
	var n int
	var msg string
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*), max(data->'error'->>'message') FROM event
		WHERE tenant_id = $1 AND name = 'ductor.schedule.failed' AND data->>'schedule_id' = 'greet-later'`, b.tenantA.ID).Scan(&n, &msg); err != nil {
		t.Fatal(err)
	}
	if n != 1 || !strings.Contains(msg, "name") {
		t.Errorf("%d ductor.schedule.failed events, message %q", n, msg)
	}
}

// subscriptionIsolationCases are tenant B's calls on tenant A's
// subscription, for TestAPITenantIsolation, and what of A's must not
// leak.
func subscriptionIsolationCases(t *testing.T, b *apiBundle) (map[string]isolationCase, []string) {
	t.Helper()
	code, sub := b.call(t, "POST", "/api/v1/subscriptions", b.keyA, `{"url": "https://a-secret.example/hook", "events": ["x"]}`)
	if code != http.StatusCreated {
		t.Fatalf("create subscription: %d %v", code, sub)
	}
	one := "/api/v1/subscriptions/" + sub["id"].(string)
	return map[string]isolationCase{
		"POST /api/v1/subscriptions":                                    {"/api/v1/subscriptions", `{"url": "https://b.example", "events": ["x"]}`, 201},
		"GET /api/v1/subscriptions":                                     {"/api/v1/subscriptions", "", 200},
		"GET /api/v1/subscriptions/:id":                                 {one, "", 404},
		"DELETE /api/v1/subscriptions/:id":                              {one, "", 404},
		"POST /api/v1/subscriptions/:id/rotate":                         {one + "/rotate", "", 404},
		"POST /api/v1/subscriptions/:id/enable":                         {one + "/enable", "", 404},
		"GET /api/v1/subscriptions/:id/deliveries":                      {one + "/deliveries", "", 404},
		"POST /api/v1/subscriptions/:id/deliveries/:delivery/redeliver": {one + "/deliveries/" + uuid.NewString() + "/redeliver", "", 404},
	}, []string{"a-secret.example", sub["secret"].(string)}
}
