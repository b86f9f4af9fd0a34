package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// A run parked on an approval for the owners: its step panel offers the
// owner Approve and Reject with a comment, and approving there comes
// back to the panel with the decision and lets the run go on; a member
// who may approve but is not among the approvers sees the inbox link
// and no buttons.
func TestInspectorApproveInChromium(t *testing.T) {
	t.Parallel()
	pool, url := testdb.SchemaURL(t)
	p := start(t, map[string]string{"DATABASE_URL": url, "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_HTTP_ALLOW": "127.0.0.1/32"}, "dev")
	id := publishRun(t, p, "release", `
key: release
steps:
  - { ref: gate, type: approval, with: { approvers: [ "role:owner" ], title: Release 1.4, description: Ship it to production } }
  - { ref: ship, type: task, with: { handler: builtin.noop } }
edges:
  - { from: gate, to: ship, on: approved }
`, map[string]any{"version": "1.4"})
	waitAPI(t, p, "/runs/"+id, "the run to wait for the approval", func(r map[string]any) bool { return r["status"] == "waiting" })
	panel := p.BaseURL + "/t/dev/runs/" + id + "?node=gate#node"

	other := newBrowser(t)
	signInAs(t, other, p, store.New(pool), "ann@example.com", auth.RoleApprover)
	run(t, other, "the panel to one not addressed", chromedp.Navigate(panel), chromedp.WaitVisible(chromedp.CSS("#node-approval-inbox")))
	if n := count(t, other, "#node-approval-form, #node-approve, #node-reject"); n != 0 {
		t.Errorf("a member the approval is not addressed to is offered %d decision controls", n)
	}
	shoot(t, other, "inspector-approval-not-approver")
	inspectorAxeClean(t, other, "the approval panel to one not addressed")

	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "the panel to an approver", chromedp.Navigate(panel), chromedp.WaitVisible(chromedp.CSS("#node-approve")))
	if count(t, ctx, "#node-reject") != 1 || count(t, ctx, "#node-approval-inbox") != 1 {
		t.Errorf("the approver's panel lacks Reject or the inbox link")
	}
	if got := text(t, ctx, "#node-approval-h"); !strings.Contains(got, "Release 1.4") {
		t.Errorf("the decision is headed %q", got)
	}
	shoot(t, ctx, "inspector-approval-decide")
	inspectorAxeClean(t, ctx, "the approval panel to an approver")

	run(t, ctx, "approve", chromedp.SendKeys(chromedp.CSS("#node-approval-comment"), "go ahead"),
		chromedp.Click(chromedp.CSS("#node-approve")), chromedp.WaitVisible(chromedp.CSS("#node-approval-mine")))
	if loc := location(t, ctx); !strings.Contains(loc, "node=gate") || !strings.Contains(loc, "done=approve") {
		t.Errorf("the decision came back to %s, want the step's panel", loc)
	}
	if got := text(t, ctx, "#node-approval-mine"); !strings.Contains(got, "dev@localhost approved") || !strings.Contains(got, "go ahead") {
		t.Errorf("the panel shows the decision as %q", got)
	}
	if n := count(t, ctx, "#node-approval-form"); n != 0 {
		t.Error("the panel still offers the decision after it")
	}
	waitAPI(t, p, "/runs/"+id, "the approved run to succeed", func(r map[string]any) bool { return r["status"] == "succeeded" })
	waitFor(t, ctx, "the page to show the run succeeded", `document.getElementById("run-status").textContent === "succeeded"`)
	shoot(t, ctx, "inspector-approval-decided")
	inspectorAxeClean(t, ctx, "the decided approval's panel")
}

// signInAs makes email a member of the dev tenant with role and signs
// the browser in as them, with a session of their own.
func signInAs(t *testing.T, ctx context.Context, p *program, s *store.Store, email string, role auth.Role) {
	t.Helper()
	bg := context.Background()
	tenant, err := s.TenantGetBySlug(bg, "dev")
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.UserEnsure(bg, email, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MemberSet(bg, tenant.ID, email, role); err != nil {
		t.Fatal(err)
	}
	token, err := s.SessionCreate(bg, u.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: httpx.SessionCookie, Value: token, URL: p.BaseURL, Path: "/"}); err != nil {
		t.Fatalf("set the session cookie: %v", err)
	}
}
