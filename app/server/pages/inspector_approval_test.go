package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/server/servertest"
	"github.com/ductor/ductor/app/store"
)

// The step panel of an approval offers Approve and Reject to those the
// inbox offers them to (by role, by email), and to no one else (a member
// who may approve but is not addressed, a viewer addressed by email); a
// decision comes back to the panel, which then shows it instead of the
// buttons, and a second one is refused there with the reason.
func TestInspectorApprovalDecide(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: ship
steps:
  - { ref: ok, type: approval, with: { approvers: [ "role:owner", "`+dApprover+`", "`+dViewer+`" ], title: Ship it, min_approvals: 2 } }
`)
	id := b.start(t, runs.Trigger{Definition: "ship"})
	b.waitNode(t, id, "ok", engine.NodeWaiting)
	approval := store.ApprovalID(id.String() + ":ok").String()
	panel, action := "/runs/"+id.String()+"?node=ok", "/runs/"+id.String()+"/approvals/"+approval
	form := func(decision string) url.Values {
		return url.Values{"decision": {decision}, "comment": {"fine by me"}, "here": {"node=ok"}}
	}

	for who, br := range map[string]*servertest.Browser{"by role": b.owner, "by email": b.approver} {
		wantPage(t, "panel "+who, b.get(br, panel), http.StatusOK, `id="node-approval-form"`, `action="`+b.base+action+`"`,
			`id="node-approve"`, `id="node-reject"`, `id="node-approval-inbox"`)
	}
	for who, br := range map[string]*servertest.Browser{"not addressed": b.approver2, "a viewer": b.viewer} {
		page := b.get(br, panel)
		wantPage(t, "panel "+who, page, http.StatusOK, `id="node-approval-inbox"`)
		if strings.Contains(page.Body, `id="node-approval-form"`) {
			t.Errorf("%s is offered the decision", who)
		}
	}
	wantPage(t, "not addressed decides", b.post(b.approver2, action, form("approve")), http.StatusForbidden, "not an approver", `data-ref="ok"`)
	if a := b.post(b.viewer, action, form("approve")); a.Status != http.StatusForbidden {
		t.Errorf("viewer's decision = %d, want 403", a.Status)
	}
	wantPage(t, "no decision", b.post(b.approver, action, url.Values{"here": {"node=ok"}}), http.StatusBadRequest, `decision must be`)

	done := b.post(b.approver, action, form("approve"))
	wantRedirect(t, "approve", done, "/runs/"+id.String()+"?done=approve&node=ok#node")
	after := b.get(b.approver, strings.TrimPrefix(done.Location, b.base))
	wantPage(t, "after deciding", after, http.StatusOK, `id="notice"`, "your decision is recorded", `id="node-approval-mine"`,
		dApprover+" approved at", "fine by me", "1 of 2 approved")
	if strings.Contains(after.Body, `id="node-approval-form"`) {
		t.Error("the panel still offers the decision to the approver who decided")
	}
	wantPage(t, "second decision", b.post(b.approver, action, form("reject")), http.StatusConflict, "already decided", `data-ref="ok"`)
	other := b.get(b.owner, panel)
	wantPage(t, "the other approver's panel", other, http.StatusOK, `id="node-approval-form"`, dApprover+" approved at")
	if strings.Contains(other.Body, `id="node-approval-mine"`) {
		t.Error("another's decision is marked as the owner's")
	}
	if r := b.waitRun(t, id, "still waiting", func(store.Run) bool { return true }); r.Status != engine.RunWaiting {
		t.Fatalf("one approval of two moved the run to %s", r.Status)
	}

	second := b.start(t, runs.Trigger{Definition: "ship"})
	if a := b.post(b.owner, "/runs/"+second.String()+"/approvals/"+approval, form("approve")); a.Status != http.StatusNotFound {
		t.Errorf("deciding another run's approval = %d, want 404", a.Status)
	}
	if a := b.post(b.owner, "/runs/"+id.String()+"/approvals/"+uuid.NewString(), form("approve")); a.Status != http.StatusNotFound {
		t.Errorf("deciding an unknown approval = %d, want 404", a.Status)
	}
	wantRedirect(t, "second approver", b.post(b.owner, action, form("approve")), "done=approve")
	b.waitStatus(t, id, engine.RunSucceeded)
	closed := b.get(b.owner, panel)
	wantPage(t, "approved", closed, http.StatusOK, `class="status approved"`, `id="node-approval-mine"`)
	if strings.Contains(closed.Body, `id="node-approval-form"`) || strings.Contains(closed.Body, `id="node-approval-inbox"`) {
		t.Error("the decided approval still offers a decision")
	}
	if list, err := b.store.ApprovalsOfRun(context.Background(), b.tenant.ID, id); err != nil || len(list[0].Decisions) != 2 {
		t.Errorf("the approval's decisions: %+v, %v", list, err)
	}
}

// runApprovalFixture opens a second approval on the run, addressed to the
// person, for the run page's decision route (the inbox's route decides
// the first).
func runApprovalFixture(t *testing.T, s *store.Store, tenant store.Tenant, run store.Run, email string) uuid.UUID {
	t.Helper()
	id := store.ApprovalID(run.ID.String() + ":gate")
	if err := s.ApprovalOpen(context.Background(), store.Approval{TenantID: tenant.ID, ID: id, RunID: run.ID, Node: "gate",
		Title: "secret gate", Approvers: []string{email}}); err != nil {
		t.Fatal(err)
	}
	return id
}
