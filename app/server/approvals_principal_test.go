package server

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// decideAs posts a decision to the API with the key.
func decideAs(t *testing.T, base, approval, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/v1/approvals/"+approval+"/decision", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// One admin cannot be both people of a two-person approval: a key they
// make in the dashboard decides as them, whatever name it has, so it
// cannot add the second approval after their own. A key an operator
// made is another decider and can. The inbox shows a long comment as a
// preview.
func TestOneAdminIsOneApprover(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: release
steps:
  - { ref: ok, type: approval, with: { approvers: [ "`+dOwner+`", "key:deployer" ], title: Release, min_approvals: 2 } }
`)
	id := b.start(t, runs.Trigger{Definition: "release"})
	b.waitNode(t, id, "ok", engine.NodeWaiting)
	approval := store.ApprovalID(id.String() + ":ok").String()
	long := strings.Repeat("é", 2000) // 4000 bytes
	wantRedirect(t, "owner's approval", b.post(b.owner, "/inbox/approvals/"+approval, url.Values{"decision": {"approve"}, "comment": {long}}), "/inbox?done=approve")
	decided := b.get(b.owner, "/inbox?tab=decided")
	wantPage(t, "decided tab", decided, http.StatusOK, strings.Repeat("é", store.CommentPreview)+"…")
	if strings.Contains(decided.body, strings.Repeat("é", store.CommentPreview+1)) {
		t.Error("the inbox shows a long comment whole")
	}

	made := b.post(b.owner, "/settings/keys", url.Values{"name": {"deployer"}, "scope": {string(auth.ScopeApprovalsWrite)}})
	secret := regexp.MustCompile(`<code id="new-key">(dk_\w+)</code>`).FindStringSubmatch(b.get(b.owner, strings.TrimPrefix(made.location, b.base)).body)
	if secret == nil {
		t.Fatalf("no key made: %d %s", made.status, made.location)
	}
	if code, body := decideAs(t, b.srvURL, approval, secret[1], `{"decision": "approve"}`); code != http.StatusConflict || !strings.Contains(body, "already decided") {
		t.Errorf("the owner's own key named deployer = %d %s, want 409", code, body)
	}
	if r := b.waitRun(t, id, "read", func(store.Run) bool { return true }); r.Status != engine.RunWaiting {
		t.Fatalf("one person approved twice: the run is %s", r.Status)
	}
	_, other := testdb.APIKey(t, b.store, b.tenant, &testdb.APIKeyOpts{Name: testdb.Ptr("deployer"), Scopes: []auth.Scope{auth.ScopeApprovalsWrite}})
	if code, body := decideAs(t, b.srvURL, approval, other, `{"decision": "approve"}`); code != http.StatusOK {
		t.Fatalf("an operator's key named deployer = %d %s, want 200", code, body)
	}
	b.waitStatus(t, id, engine.RunSucceeded)
}

// A comment over 4 KiB is refused; lists show each comment as a bounded
// preview, flagged, and the approval alone shows it whole.
func TestLongCommentsAreRefusedAndListsStaySmall(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	var steps strings.Builder
	const n = 6
	for i := range n {
		fmt.Fprintf(&steps, "  - { ref: a%d, type: approval, with: { approvers: [ \"key:rev\" ] } }\n", i)
	}
	b.publishYAML(t, "key: many\nsteps:\n"+steps.String())
	id := b.startRun(t, "many")
	for i := range n {
		b.waitWaiting(t, id, fmt.Sprintf("a%d", i))
	}
	_, rev := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Name: testdb.Ptr("rev"), Scopes: []auth.Scope{auth.ScopeApprovalsWrite}})
	_, list := b.call(t, "GET", "/api/v1/approvals?status=pending", b.keyA, "")
	var ids []string
	for _, a := range list["approvals"].([]any) {
		ids = append(ids, a.(map[string]any)["id"].(string))
	}
	if len(ids) != n {
		t.Fatalf("%d approvals, want %d", len(ids), n)
	}
	code, body := b.call(t, "POST", "/api/v1/approvals/"+ids[0]+"/decision", rev, `{"decision": "approve", "comment": "`+strings.Repeat("x", 5<<10)+`"}`)
	if e, _ := body["error"].(map[string]any); code != http.StatusUnprocessableEntity || e["code"] != "unprocessable" || !strings.Contains(fmt.Sprint(e["message"]), "4096") {
		t.Fatalf("a 5 KiB comment = %d %v, want 422 naming the limit", code, body)
	}
	long := strings.Repeat("y", store.MaxCommentBytes)
	for _, a := range ids {
		if code, body := b.call(t, "POST", "/api/v1/approvals/"+a+"/decision", rev, `{"decision": "approve", "comment": "`+long+`"}`); code != 200 {
			t.Fatalf("a 4 KiB comment = %d %v", code, body)
		}
	}
	code, _, raw := b.callRaw(t, "GET", "/api/v1/approvals", "")
	if code != 200 || len(raw) > n*1024 {
		t.Errorf("list of %d approvals with 4 KiB comments = %d, %d bytes; want previews", n, code, len(raw))
	}
	_, list = b.call(t, "GET", "/api/v1/approvals", b.keyA, "")
	for _, a := range list["approvals"].([]any) {
		d := a.(map[string]any)["decisions"].([]any)[0].(map[string]any)
		if c := d["comment"].(string); d["comment_truncated"] != true || utf8.RuneCountInString(c) != store.CommentPreview+1 || !strings.HasSuffix(c, "…") {
			t.Errorf("listed decision %v, want a flagged preview of %d characters and an ellipsis", d, store.CommentPreview)
		}
	}
	_, one := b.call(t, "GET", "/api/v1/approvals/"+ids[0], b.keyA, "")
	if d := one["decisions"].([]any)[0].(map[string]any); d["comment"] != long || d["comment_truncated"] != nil {
		t.Errorf("GET /approvals/{id} does not show the comment whole: %d characters, truncated %v", len(fmt.Sprint(d["comment"])), d["comment_truncated"])
	}
}
