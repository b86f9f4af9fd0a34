package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server/api"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// isolationCase is a row of TestAPITenantIsolation.
type isolationCase = struct {
	path, body string
	status     int
}

// waitingIsolationCases gives tenant A an approval and a case on run
// runID and returns the waiting routes' cases as tenant B with the ids B
// must never see.
func waitingIsolationCases(t *testing.T, b *apiBundle, runID string) (map[string]isolationCase, []string) {
	t.Helper()
	ctx, run := context.Background(), uuid.MustParse(runID)
	approval, kase := store.ApprovalID(runID+":secret"), store.CaseID(runID+":secret")
	if err := b.store.ApprovalOpen(ctx, store.Approval{TenantID: b.tenantA.ID, ID: approval, RunID: run, Node: "only",
		Title: "secret approval", Approvers: []string{"a@example.com", "key:test key"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.CaseCreate(ctx, store.Case{TenantID: b.tenantA.ID, ID: kase, RunID: run, Node: "only",
		Title: "secret case", AwaitingStatus: "resolved"}); err != nil {
		t.Fatal(err)
	}
	return map[string]isolationCase{
		"POST /api/v1/runs/:id/signals":       {"/api/v1/runs/" + runID + "/signals", `{"request_id": "r", "name": "go"}`, 404},
		"POST /api/v1/events":                 {"/api/v1/events", `{"name": "go"}`, 202},
		"GET /api/v1/approvals":               {"/api/v1/approvals", "", 200},
		"GET /api/v1/approvals/:id":           {"/api/v1/approvals/" + approval.String(), "", 404},
		"POST /api/v1/approvals/:id/decision": {"/api/v1/approvals/" + approval.String() + "/decision", `{"decision": "approve"}`, 404},
		"GET /api/v1/cases":                   {"/api/v1/cases?include=data", "", 200},
		"GET /api/v1/cases/:id":               {"/api/v1/cases/" + kase.String(), "", 404},
		"PATCH /api/v1/cases/:id":             {"/api/v1/cases/" + kase.String(), `{"status": "resolved"}`, 404},
	}, []string{approval.String(), kase.String(), "secret approval", "secret case"}
}

func (b *apiBundle) publishYAML(t *testing.T, doc string) {
	t.Helper()
	c, err := definition.Compile([]byte(doc), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	b.publish(t, c.Manifest)
}

// waitWaiting polls the run through the API until node waits, and
// returns the node.
func (b *apiBundle) waitWaiting(t *testing.T, id, node string) map[string]any {
	t.Helper()
	return testwait.Value(t, 20*time.Second, "node "+node+" of run "+id+" waits", func() (map[string]any, bool) {
		_, run := b.call(t, "GET", "/api/v1/runs/"+id, b.keyA, "")
		nodes, _ := run["nodes"].([]any)
		for _, n := range nodes {
			if m := n.(map[string]any); m["node"] == node && m["state"] == "waiting" {
				return m, true
			}
		}
		return nil, false
	})
}

func (b *apiBundle) startRun(t *testing.T, key string) string {
	t.Helper()
	code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "`+key+`"}`)
	if code != http.StatusCreated {
		t.Fatalf("start %s: %d %v", key, code, body)
	}
	return body["id"].(string)
}

func TestSignalsAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: sig
steps:
  - { ref: a, type: signal, with: { name: a } }
  - { ref: b, type: signal, with: { name: b } }
edges:
  - { from: a, to: b }
`)
	id := b.startRun(t, "sig")
	w := b.waitWaiting(t, id, "a")["waiting"].(map[string]any)
	if w["type"] != "signal" || w["name"] != "a" {
		t.Errorf("waiting %v, want signal a", w)
	}
	path := "/api/v1/runs/" + id + "/signals"
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"request_id": "1", "name": "a", "payload": {"n": 1}}`, 202},
		{`{"request_id": "1", "name": "b"}`, 409},
		{`{"name": "b"}`, 400},
		{`{"request_id": "big", "name": "b", "payload": "` + strings.Repeat("x", 1<<20) + `"}`, 413},
		{`{"request_id": "2", "name": "b", "payload": [2]}`, 202},
	} {
		if code, body := b.call(t, "POST", path, b.keyA, tc.body); code != tc.status {
			t.Errorf("%.60s: %d %v, want %d", tc.body, code, body, tc.status)
		}
	}
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" {
		t.Fatalf("run %v", run)
	}
	if code, _ := b.call(t, "POST", path, b.keyA, `{"request_id": "3", "name": "b"}`); code != http.StatusConflict {
		t.Errorf("signal to an ended run: %d, want 409", code)
	}
	_, key := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: []auth.Scope{auth.ScopeRunsRead}})
	if code, _ := b.call(t, "POST", path, key, `{"request_id": "4", "name": "b"}`); code != http.StatusForbidden {
		t.Errorf("signal without signals:write: %d, want 403", code)
	}
}

func TestSignalsAPIBound(t *testing.T) {
	t.Parallel()
	b := setupAPIConfig(t, func(c *workers.Config) { c.MaxBufferedSignals = 2 })
	b.publishYAML(t, `
key: sig
steps:
  - { ref: a, type: signal, with: { name: a } }
`)
	id := b.startRun(t, "sig")
	b.waitWaiting(t, id, "a")
	for i, want := range []int{202, 202, 429} {
		body := `{"request_id": "` + string(rune('a'+i)) + `", "name": "other"}`
		if code, out := b.call(t, "POST", "/api/v1/runs/"+id+"/signals", b.keyA, body); code != want {
			t.Errorf("signal %d: %d %v, want %d", i, code, out, want)
		}
	}
}

func TestEventsAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: ev
steps:
  - { ref: paid, type: event, with: { name: paid, match_expr: 'event.order == 7' } }
`)
	id := b.startRun(t, "ev")
	if w := b.waitWaiting(t, id, "paid")["waiting"].(map[string]any); w["type"] != "event" || w["name"] != "paid" {
		t.Errorf("waiting %v", w)
	}
	code, first := b.call(t, "POST", "/api/v1/events", b.keyA, `{"name": "paid", "data": {"order": 6}, "idempotency_key": "k6"}`)
	if code != http.StatusAccepted || first["id"] == nil {
		t.Fatalf("event: %d %v", code, first)
	}
	if _, again := b.call(t, "POST", "/api/v1/events", b.keyA, `{"name": "paid", "data": {"order": 6}, "idempotency_key": "k6"}`); again["id"] != first["id"] {
		t.Errorf("repeated idempotency key gave %v, want %v", again["id"], first["id"])
	}
	if code, _ := b.call(t, "POST", "/api/v1/events", b.keyA, `{"data": {}}`); code != http.StatusBadRequest {
		t.Errorf("event without a name: %d", code)
	}
	if code, _ := b.call(t, "POST", "/api/v1/events", b.keyA, `{"name": "paid", "data": "`+strings.Repeat("x", 1<<20)+`"}`); code != http.StatusRequestEntityTooLarge {
		t.Errorf("large event: %d, want 413", code)
	}
	b.call(t, "POST", "/api/v1/events", b.keyA, `{"name": "paid", "data": {"order": 7}}`)
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || run["output"].(map[string]any)["paid"].(map[string]any)["order"] != 7.0 {
		t.Errorf("run %v", run)
	}
}

func TestApprovalsAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: ap
steps:
  - { ref: ok, type: approval, with: { approvers: [ "role:finance", "key:ci-a", "key:ci-b" ], title: Pay, min_approvals: 2 } }
`)
	id := b.startRun(t, "ap")
	if w := b.waitWaiting(t, id, "ok")["waiting"].(map[string]any); w["type"] != "approval" || w["approval_id"] == nil {
		t.Errorf("waiting %v, want approval with its id", w)
	}
	_, list := b.call(t, "GET", "/api/v1/approvals?status=pending", b.keyA, "")
	approvals := list["approvals"].([]any)
	if len(approvals) != 1 {
		t.Fatalf("approvals %v", list)
	}
	a := approvals[0].(map[string]any)
	path := "/api/v1/approvals/" + a["id"].(string) + "/decision"
	_, first := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Name: testdb.Ptr("ci-a"), Scopes: []auth.Scope{auth.ScopeApprovalsWrite}})
	_, other := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Name: testdb.Ptr("ci-b"), Scopes: []auth.Scope{auth.ScopeApprovalsWrite}})
	for _, tc := range []struct {
		key, body string
		status    int
	}{
		{first, `{"decision": "maybe"}`, 400},
		{b.keyA, `{"decision": "approve"}`, 403}, // an admin key the approval does not name
		{first, `{"decision": "approve", "comment": "fine"}`, 200},
		{first, `{"decision": "approve"}`, 409},
		{other, `{"decision": "approve"}`, 200},
		{other, `{"decision": "reject"}`, 409},
	} {
		if code, body := b.call(t, "POST", path, tc.key, tc.body); code != tc.status {
			t.Errorf("%s: %d %v, want %d", tc.body, code, body, tc.status)
		}
	}
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" {
		t.Errorf("run %v", run)
	}
	_, list = b.call(t, "GET", "/api/v1/approvals?status=approved", b.keyA, "")
	if got := list["approvals"].([]any); len(got) != 1 || len(got[0].(map[string]any)["decisions"].([]any)) != 2 {
		t.Errorf("approved list %v", list)
	}
}

func TestCasesAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: hl
steps:
  - ref: review
    type: human_loop
    with:
      title: Review
      assignees: [ "role:ops" ]
      fields: { type: object, properties: { note: { type: string } }, required: [ note ] }
      awaiting_status: done
`)
	id := b.startRun(t, "hl")
	if w := b.waitWaiting(t, id, "review")["waiting"].(map[string]any); w["type"] != "interaction" || w["case_id"] == nil {
		t.Errorf("waiting %v, want interaction with its case id", w)
	}
	_, list := b.call(t, "GET", "/api/v1/cases?status=open", b.keyA, "")
	cases := list["cases"].([]any)
	if len(cases) != 1 {
		t.Fatalf("cases %v", list)
	}
	path := "/api/v1/cases/" + cases[0].(map[string]any)["id"].(string)
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"status": "working", "data": {"note": 5}}`, 422},
		{`{"status": "done"}`, 422},
		{`{"status": "working", "data": {"note": "half"}}`, 200},
		{`{"status": "done", "data": {"note": "all"}}`, 200},
		{`{"status": "reopened"}`, 409},
	} {
		if code, body := b.call(t, "PATCH", path, b.keyA, tc.body); code != tc.status {
			t.Errorf("%s: %d %v, want %d", tc.body, code, body, tc.status)
		}
	}
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" || run["output"].(map[string]any)["review"].(map[string]any)["note"] != "all" {
		t.Errorf("run %v", run)
	}
}

// The case list shows summaries: no data unless ?include=data, and then
// none larger than the cap (named in truncated); GET on one case has it
// whole.
func TestCaseListShowsSummaries(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("hl", "only"))
	run, err := uuid.Parse(b.startRun(t, "hl"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	big := strings.Repeat("x", api.MaxIncludedBytes)
	for name, note := range map[string]string{"small": "short", "big": big} {
		id := store.CaseID(run.String() + ":" + name)
		if err := b.store.CaseCreate(ctx, store.Case{TenantID: b.tenantA.ID, ID: id, RunID: run, Node: "only", Title: name, AwaitingStatus: "done"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.CaseUpdate(ctx, b.tenantA.ID, id, store.CaseChange{Data: map[string]any{"note": note}}); err != nil {
			t.Fatal(err)
		}
	}
	byTitle := func(path string) map[string]map[string]any {
		t.Helper()
		code, list := b.call(t, "GET", path, b.keyA, "")
		cases, _ := list["cases"].([]any)
		if code != 200 || len(cases) != 2 {
			t.Fatalf("GET %s = %d %v", path, code, list)
		}
		out := map[string]map[string]any{}
		for _, c := range cases {
			out[c.(map[string]any)["title"].(string)] = c.(map[string]any)
		}
		return out
	}
	for title, c := range byTitle("/api/v1/cases") {
		if _, ok := c["data"]; ok || c["truncated"] != nil || c["status"] != "open" {
			t.Errorf("%s in the list = %v, want no data", title, c)
		}
	}
	with := byTitle("/api/v1/cases?include=data")
	if d, _ := with["small"]["data"].(map[string]any); d["note"] != "short" || with["small"]["truncated"] != nil {
		t.Errorf("small with include=data = %v", with["small"])
	}
	if _, ok := with["big"]["data"]; ok || fmt.Sprint(with["big"]["truncated"]) != "[data]" {
		t.Errorf("big with include=data = data %v, truncated %v; want it left out and named", ok, with["big"]["truncated"])
	}
	code, whole := b.call(t, "GET", "/api/v1/cases/"+with["big"]["id"].(string), b.keyA, "")
	if d, _ := whole["data"].(map[string]any); code != 200 || d["note"] != big {
		t.Errorf("GET the big case = %d, data of %d characters", code, len(fmt.Sprint(d["note"])))
	}
	if code, _ := b.call(t, "GET", "/api/v1/cases?include=input", b.keyA, ""); code != 400 {
		t.Errorf("include=input = %d, want 400", code)
	}
}
