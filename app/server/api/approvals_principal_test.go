package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

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
