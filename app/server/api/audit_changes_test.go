package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// Schedule, webhook and case changes made through the API appear in the
// tenant's audit log with the key that made them; a case answers with
// the actor of its last change, and so does the inbox.
func TestChangesAreAuditedWithTheirActor(t *testing.T) {
	t.Parallel()
	b := setupAPI(t, func(d *server.Deps) { d.Web = true })
	b.publish(t, noopManifest("tick", "a"))
	b.publishYAML(t, `
key: hl
steps:
  - { ref: review, type: human_loop, with: { title: Review, assignees: [ "role:owner" ], awaiting_status: done } }
`)
	k, key := testdb.APIKey(t, b.store, b.tenantA, nil)
	actor := store.ActorKey(k)
	s := "/api/v1/schedules/nightly"
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/schedules", `{"id": "nightly", "definition": "tick", "spec": {"cron": "0 3 * * *"}, "paused": true}`},
		{"PATCH", s, `{"paused": false}`},
		{"PATCH", s, `{"paused": true, "note": "quiet week"}`},
		{"PATCH", s, `{"input": {"n": 2}}`},
		{"POST", s + "/trigger", ""},
		{"POST", s + "/backfill", `{"from": "2024-01-01T00:00:00Z", "to": "2024-01-02T00:00:00Z"}`},
		{"DELETE", s, ""},
		{"POST", "/api/v1/webhooks", `{"id": "gh", "event": "push"}`},
		{"POST", "/api/v1/webhooks/gh/rotate", ""},
		{"DELETE", "/api/v1/webhooks/gh", ""},
	} {
		if code, body := b.call(t, c.method, c.path, key, c.body); code >= 300 {
			t.Fatalf("%s %s = %d %v", c.method, c.path, code, body)
		}
	}
	run := b.startRun(t, "hl")
	caseID := b.waitWaiting(t, run, "review")["waiting"].(map[string]any)["case_id"].(string)
	code, kase := b.call(t, "PATCH", "/api/v1/cases/"+caseID, key, `{"status": "working"}`)
	if code != 200 || kase["updated_by"] != actor {
		t.Errorf("case after a change = %d %v, want updated_by %s", code, kase, actor)
	}
	_, list := b.call(t, "GET", "/api/v1/cases", b.keyA, "")
	if cs := list["cases"].([]any); len(cs) != 1 || cs[0].(map[string]any)["updated_by"] != actor {
		t.Errorf("case list = %v, want updated_by %s", cs, actor)
	}

	entries, err := b.store.AuditList(context.Background(), b.tenantA.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Action+" "+e.Target] = e.Actor
	}
	for _, want := range []string{
		"schedule.create nightly", "schedule.resume nightly", "schedule.pause nightly", "schedule.update nightly",
		"schedule.trigger nightly", "schedule.backfill nightly", "schedule.delete nightly",
		"webhook.create gh", "webhook.rotate gh", "webhook.delete gh", "case.update " + caseID,
	} {
		if got[want] != actor {
			t.Errorf("audit log: %q by %q, want by %s (log: %v)", want, got[want], actor, got)
		}
	}

	// The owner reads them on the audit page.
	owner := "owner@audit.example"
	if _, err := b.store.MemberSet(context.Background(), b.tenantA.ID, owner, auth.RoleOwner); err != nil {
		t.Fatal(err)
	}
	br := servertest.NewBrowserClient(t)
	servertest.SignInTo(t, b.store, b.srv.URL, br, owner)
	page := br.Get(b.srv.URL + "/t/" + b.tenantA.Slug + "/settings/audit")
	for _, want := range []string{"schedule.backfill", "webhook.rotate", "case.update", actor} {
		if page.Status != http.StatusOK || !strings.Contains(page.Body, want) {
			t.Errorf("audit page = %d, without %q", page.Status, want)
		}
	}
	if inbox := br.Get(b.srv.URL + "/t/" + b.tenantA.Slug + "/inbox"); !strings.Contains(inbox.Body, "Last changed by "+actor) {
		t.Errorf("the inbox does not show who changed the case last: %d", inbox.Status)
	}
}
