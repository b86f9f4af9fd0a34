package pages_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// An approval for two approvers by role: each decides as themselves, the
// decided approval leaves their inbox for the decided tab, a second
// decision is refused with the reason, and people it is not addressed to
// neither see it nor decide it.
func TestInboxApprovals(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: pay
steps:
  - { ref: prep, type: task, with: { handler: builtin.echo } }
  - { ref: ok, type: approval, with: { approvers: [ "role:approver" ], title: Pay invoice, description: "Invoice 42 from ACME", min_approvals: 2 } }
edges:
  - { from: prep, to: ok }
`)
	id := b.start(t, runs.Trigger{Definition: "pay", Input: map[string]any{"amount": 1234}})
	b.waitNode(t, id, "ok", engine.NodeWaiting)
	approval := store.ApprovalID(id.String() + ":ok").String()
	form := func(decision string) url.Values { return url.Values{"decision": {decision}, "comment": {"fine by me"}} }

	inbox := b.get(b.approver, "/inbox")
	wantPage(t, "approver's inbox", inbox, http.StatusOK, `id="inbox-badge"`, "Pay invoice", "Invoice 42 from ACME",
		`data-approval="`+approval+`"`, id.String(), "Output of prep", `&#34;amount&#34;: 1234`, `value="approve"`, `value="reject"`)
	viewer := b.get(b.viewer, "/inbox")
	wantPage(t, "viewer's inbox", viewer, http.StatusOK, `id="inbox-empty"`)
	if strings.Contains(viewer.Body, approval) || strings.Contains(viewer.Body, `id="inbox-badge"`) {
		t.Error("the viewer sees an approval not addressed to them")
	}
	if a := b.post(b.viewer, "/inbox/approvals/"+approval, form("approve")); a.Status != http.StatusForbidden {
		t.Errorf("viewer's decision = %d, want 403", a.Status)
	}
	wantPage(t, "owner's decision", b.post(b.owner, "/inbox/approvals/"+approval, form("approve")), http.StatusForbidden, "not an approver")
	wantPage(t, "no decision", b.post(b.approver, "/inbox/approvals/"+approval, url.Values{}), http.StatusBadRequest, `id="inbox-error"`)

	wantRedirect(t, "first approval", b.post(b.approver, "/inbox/approvals/"+approval, form("approve")), "/inbox?done=approve")
	after := b.get(b.approver, "/inbox?done=approve")
	wantPage(t, "after deciding", after, http.StatusOK, `id="notice"`, `id="inbox-empty"`)
	if strings.Contains(after.Body, `id="inbox-badge"`) {
		t.Error("the badge still counts the decided approval")
	}
	wantPage(t, "decided tab", b.get(b.approver, "/inbox?tab=decided"), http.StatusOK, approval, dApprover+" approved at", "fine by me")
	wantPage(t, "second decision", b.post(b.approver, "/inbox/approvals/"+approval, form("reject")), http.StatusConflict,
		`id="inbox-error"`, "already decided")
	if r := b.waitRun(t, id, "still waiting", func(store.Run) bool { return true }); r.Status != engine.RunWaiting {
		t.Fatalf("one approval of two moved the run to %s", r.Status)
	}

	wantRedirect(t, "second approver", b.post(b.approver2, "/inbox/approvals/"+approval, form("approve")), "/inbox?done=approve")
	b.waitStatus(t, id, engine.RunSucceeded)
	wantPage(t, "decided approval", b.post(b.approver2, "/inbox/approvals/"+approval, form("reject")), http.StatusConflict, "already approved")
	wantPage(t, "approved", b.get(b.approver2, "/inbox?tab=decided"), http.StatusOK, `class="status approved"`, dApprover+" approved", dApprover2+" approved", "Closed ")
}

// A case form renders the fields schema's properties; invalid data is
// refused with the reason; reaching the awaited status resumes the run.
func TestInboxCase(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: review
steps:
  - ref: check
    type: human_loop
    with:
      title: Check the order
      assignees: [ "`+dApprover+`" ]
      awaiting_status: done
      fields:
        type: object
        required: [ note ]
        properties:
          note: { type: string, title: Note, maxLength: 20 }
          score: { type: integer, minimum: 1, maximum: 5 }
          urgent: { type: boolean }
          level: { enum: [ low, high ] }
`)
	id := b.start(t, runs.Trigger{Definition: "review", Subject: "order-7", Input: map[string]any{"sku": "A-1"}})
	b.waitNode(t, id, "check", engine.NodeWaiting)
	kase := store.CaseID(id.String() + ":check").String()
	path := "/inbox/cases/" + kase

	wantPage(t, "case form", b.get(b.approver, "/inbox"), http.StatusOK, "Check the order", `data-case="`+kase+`"`,
		`name="field.note"`, `type="number" step="1" name="field.score"`, `type="checkbox" name="field.urgent"`, `<option value="high">`)
	if strings.Contains(b.get(b.approver2, "/inbox").Body, kase) {
		t.Error("a case assigned by email shows to someone else")
	}
	wantPage(t, "not assigned", b.post(b.approver2, path, url.Values{"status": {"done"}, "field.note": {"x"}}), http.StatusForbidden, "not assigned to you")
	wantPage(t, "the case's run", b.get(b.approver, "/inbox"), http.StatusOK, `href="`+b.base+`/runs/`+id.String()+`"`,
		`<span class="mono run-subject">order-7</span>`, `&#34;sku&#34;: &#34;A-1&#34;`)
	wantPage(t, "missing note", b.post(b.approver, path, url.Values{"status": {"done"}}), http.StatusUnprocessableEntity, `id="inbox-error"`,
		`class="case-field invalid" data-field="note"`)
	wantPage(t, "bad score", b.post(b.approver, path, url.Values{"status": {"done"}, "field.note": {"x"}, "field.score": {"many"}}), http.StatusBadRequest,
		`data-field="score"`, `class="case-field invalid" data-field="score"`, "must be a number", `value="many"`, `value="x"`)
	// The whole schema is checked on the server, each problem on its field
	// with what was typed kept; the browser gets the bounds it can check.
	tooHigh := b.post(b.approver, path, url.Values{"status": {"done"}, "field.note": {"x"}, "field.score": {"9"}})
	wantPage(t, "score over the maximum", tooHigh, http.StatusUnprocessableEntity,
		`class="case-field invalid" data-field="score"`, "must be at most 5", `value="9"`, "fix the fields marked")
	if strings.Contains(tooHigh.Body, `class="case-field invalid" data-field="note"`) {
		t.Error("a valid field is marked invalid")
	}
	wantPage(t, "bounds for the browser", b.get(b.approver, "/inbox"), http.StatusOK, `min="1"`, `max="5"`, `maxlength="20"`)

	wantRedirect(t, "working", b.post(b.approver, path, url.Values{"status": {"working"}, "field.note": {"half"}}), "done=case")
	wantPage(t, "working case", b.get(b.approver, "/inbox"), http.StatusOK, `class="status working"`, `value="half"`)
	wantRedirect(t, "done", b.post(b.approver, path, url.Values{"status": {"done"}, "field.note": {"all"}, "field.score": {"3"}, "field.urgent": {"true"}, "field.level": {"high"}}), "done=case")
	run := b.waitStatus(t, id, engine.RunSucceeded)
	if out := prettyOutput(run); !strings.Contains(out, `"note":"all"`) || !strings.Contains(out, `"score":3`) || !strings.Contains(out, `"urgent":true`) {
		t.Errorf("run output %s lacks the case data", out)
	}
	wantPage(t, "closed case", b.get(b.approver, "/inbox?tab=decided"), http.StatusOK, kase, "Closed ")
	wantPage(t, "closed case again", b.post(b.approver, path, url.Values{"status": {"done"}, "field.note": {"x"}}), http.StatusConflict, "case is closed")
}

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
	if strings.Contains(decided.Body, strings.Repeat("é", store.CommentPreview+1)) {
		t.Error("the inbox shows a long comment whole")
	}

	made := b.post(b.owner, "/settings/keys", url.Values{"name": {"deployer"}, "scope": {string(auth.ScopeApprovalsWrite)}})
	secret := regexp.MustCompile(`<code id="new-key">(dk_\w+)</code>`).FindStringSubmatch(b.get(b.owner, strings.TrimPrefix(made.Location, b.base)).Body)
	if secret == nil {
		t.Fatalf("no key made: %d %s", made.Status, made.Location)
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

// The inbox filters by definition, and by how an item reaches the person:
// by their email, or through their role.
func TestInboxFilters(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: byname
steps:
  - { ref: ok, type: approval, with: { approvers: [ "`+dOwner+`" ], title: By name } }
`)
	b.publish(t, `
key: byrole
steps:
  - { ref: ok, type: approval, with: { approvers: [ "role:owner" ], title: By role } }
`)
	for _, key := range []string{"byname", "byrole"} {
		id := b.start(t, runs.Trigger{Definition: key})
		b.waitNode(t, id, "ok", engine.NodeWaiting)
	}
	for query, want := range map[string][]string{
		"": {"By name", "By role"}, "?definition=byrole": {"By role"}, "?assigned=me": {"By name"}, "?assigned=role": {"By role"},
	} {
		page := b.get(b.owner, "/inbox"+query)
		if page.Status != http.StatusOK {
			t.Fatalf("inbox%s = %d", query, page.Status)
		}
		for _, title := range []string{"By name", "By role"} {
			if strings.Contains(page.Body, ">"+title+" <") != slices.Contains(want, title) {
				t.Errorf("inbox%s shows %q: %v, want %v", query, title, !slices.Contains(want, title), slices.Contains(want, title))
			}
		}
		if !strings.Contains(page.Body, `<option value="byname"`) || !strings.Contains(page.Body, `id="pending-count">2<`) {
			t.Errorf("inbox%s: the filter lacks the definitions, or the badge does not count everything pending", query)
		}
	}
}
