package pages_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// caseDataDefs: a parent run with a case of its own, a sync child run and
// a child_workflow scatter whose children each open a case, and a run
// whose approval follows its case, whose output is the case's data and
// which passes the data to a child run as its input (whose approval the
// inbox shows with that input).
const caseDataDefs = `
key: cd-child
steps:
  - {ref: triage, type: human_loop, with: {title: Child triage, assignees: ["abe@t.example"]}}
---
key: cd-parent
steps:
  - {ref: triage, type: human_loop, with: {title: Triage, assignees: ["abe@t.example"]}}
  - {ref: sub, type: subworkflow, with: {workflow: cd-child, input_expr: '{}'}}
  - ref: fan
    type: scatter
    with: {items_expr: '["a"]', key_expr: item, mode: child_workflow, workflow: cd-child, input_expr: '{}'}
---
key: cd-echo
steps:
  - {ref: echo, type: transform, with: {expr: input}}
  - {ref: ok, type: approval, with: {title: Echo check, approvers: ["vera@t.example", "abe@t.example"]}}
---
key: cd-wait
output_expr: steps.triage.output
steps:
  - {ref: triage, type: human_loop, with: {title: Wait triage, assignees: ["abe@t.example"]}}
  - {ref: check, type: approval, with: {title: Check, approvers: ["vera@t.example", "abe@t.example"]}}
  - {ref: pass, type: subworkflow, with: {workflow: cd-echo, input_expr: steps.triage.output}}
edges:
  - {from: triage, to: check}
  - {from: triage, to: pass}
`

// caseRoute is one GET route that may show a run's values; shows says
// whether it shows them at all (to one who may read them).
type caseRoute struct {
	path  string
	shows bool
}

// Case data is for the case's assignees: a viewer, and an API key with
// runs:read alone, get every route that shows a node's output, a run's
// output or the inspector with the data redacted (its marker instead),
// while the assignee and a key that reads cases get it whole.
func TestRestrictedCaseDataRedactedEverywhere(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	for _, doc := range strings.Split(caseDataDefs, "---\n") {
		b.publish(t, doc)
	}
	parent := b.start(t, runs.Trigger{Definition: "cd-parent", Input: map[string]any{}})
	wait := b.start(t, runs.Trigger{Definition: "cd-wait", Input: map[string]any{}})
	cases := b.resolveCases(t, 4)
	b.waitStatus(t, parent, engine.RunSucceeded)
	b.waitNode(t, wait, "check", engine.NodeWaiting)
	echo := b.childOf(t, wait)
	b.waitNode(t, echo, "ok", engine.NodeWaiting)
	children, err := b.store.RunList(context.Background(), b.tenant.ID, store.RunFilter{ParentID: &parent, Limit: 10})
	if err != nil || len(children) != 2 {
		t.Fatalf("children = %v, %v", children, err)
	}

	// The inbox shows the approver the outputs before the approval.
	inbox := []caseRoute{{"/inbox", true}}
	b.checkCaseRoutes(t, "inbox", inbox, cases)

	for _, id := range []uuid.UUID{wait, echo} {
		if _, err := b.runs.DecideApproval(context.Background(), b.tenant.ID, b.approvalOf(t, id), store.Decision{
			By: "user:" + dApprover, Approved: true, Who: store.Audience(dApprover),
		}); err != nil {
			t.Fatal(err)
		}
	}
	b.waitStatus(t, wait, engine.RunSucceeded)

	var web, api []caseRoute
	for _, id := range []uuid.UUID{parent, wait, children[0].ID, children[1].ID} {
		web = append(web, runWebRoutes(id)...)
		api = append(api, runAPIRoutes(id)...)
	}
	web = append(web, caseRoute{"/runs/" + parent.String() + "?node=fan", true}, caseRoute{"/runs/" + parent.String() + "?node=" + url.QueryEscape("fan[a]"), true},
		caseRoute{"/runs/" + parent.String() + "/json/nodes/" + url.PathEscape("fan[a]"), true}, caseRoute{"/runs/" + parent.String() + "/json/nodes/sub", true},
		caseRoute{"/runs/" + parent.String() + "/json/nodes/fan", true}, caseRoute{"/runs/" + parent.String() + "?node=sub", true},
		caseRoute{"/runs/" + echo.String(), true}, caseRoute{"/runs/" + echo.String() + "/json/input", true},
		caseRoute{"/runs/" + echo.String() + "/json/output", true}, caseRoute{"/runs/" + echo.String() + "/json/nodes/echo", true})
	web = append(web, b.attemptRoutes(t, parent, wait, children[0].ID, children[1].ID)...)
	web = append(web, caseRoute{"/runs", false}, caseRoute{"/runs?parent_run_id=" + parent.String(), false})
	api = append(api, caseRoute{"/api/v1/runs?include=input,output,context", true},
		caseRoute{"/api/v1/runs?include=output&parent_run_id=" + parent.String(), true},
		caseRoute{"/api/v1/runs/" + parent.String() + "/nodes/fan/children", true},
		caseRoute{"/api/v1/runs/" + echo.String(), true}, caseRoute{"/api/v1/runs?include=input&parent_run_id=" + wait.String(), true})
	b.checkCaseRoutes(t, "dashboard", web, cases)
	b.checkCaseRoutes(t, "api", api, cases)
}

// runWebRoutes are a run's dashboard routes that could show its values.
func runWebRoutes(id uuid.UUID) []caseRoute {
	run := "/runs/" + id.String()
	return []caseRoute{
		{run, true}, {run + "?node=triage", true}, {run + "/json/output", true}, {run + "/json/input", false},
		{run + "/json/nodes/triage", true}, {run + "/live", false}, {run + "/events", false},
	}
}

// runAPIRoutes are a run's API routes that could show its values.
func runAPIRoutes(id uuid.UUID) []caseRoute {
	run := "/api/v1/runs/" + id.String()
	return []caseRoute{{run, true}, {run + "/history", false}}
}

// attemptRoutes are the downloads of every attempt with an output.
func (b *dashBundle) attemptRoutes(t *testing.T, runs ...uuid.UUID) []caseRoute {
	t.Helper()
	var out []caseRoute
	for _, id := range runs {
		list, err := b.store.RunAttempts(context.Background(), b.tenant.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range list {
			if a.Output != nil {
				out = append(out, caseRoute{fmt.Sprintf("/runs/%s/json/nodes/%s/attempts/%d/%d", id, url.PathEscape(a.Node), a.Generation, a.Attempt.Attempt), false})
			}
		}
	}
	return out
}

// resolveCases resolves the n cases the runs open, each with data of its
// own: {"note": "secret-N"}.
func (b *dashBundle) resolveCases(t *testing.T, n int) []store.Case {
	t.Helper()
	ctx := context.Background()
	var open []store.Case
	testwait.Until(ctx, 20*time.Second, func() bool {
		var err error
		open, err = b.store.CaseList(ctx, b.tenant.ID, store.CaseFilter{Status: store.CaseOpen})
		return err == nil && len(open) == n
	})
	if len(open) != n {
		t.Fatalf("%d cases opened, want %d", len(open), n)
	}
	resolved := "resolved"
	for i, k := range open {
		data := map[string]any{"note": fmt.Sprintf("secret-%d", i)}
		if _, err := b.runs.UpdateCase(ctx, b.tenant.ID, k.ID, runs.CaseChange{Status: &resolved, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	return open
}

// childOf waits for the one child run of run.
func (b *dashBundle) childOf(t *testing.T, run uuid.UUID) uuid.UUID {
	t.Helper()
	return testwait.Value(t, 20*time.Second, "run "+run.String()+" has a child", func() (uuid.UUID, bool) {
		list, err := b.store.RunList(context.Background(), b.tenant.ID, store.RunFilter{ParentID: &run, Limit: 2})
		if err == nil && len(list) == 1 {
			return list[0].ID, true
		}
		return uuid.Nil, false
	})
}

func (b *dashBundle) approvalOf(t *testing.T, run uuid.UUID) uuid.UUID {
	t.Helper()
	list, err := b.store.ApprovalsOfRun(context.Background(), b.tenant.ID, run)
	if err != nil || len(list) != 1 {
		t.Fatalf("approvals = %v, %v", list, err)
	}
	return list[0].ID
}

// checkCaseRoutes reads every route as one who may not read the cases
// (the viewer, a runs:read key) and as one who may (the assignee, a key
// with approvals:write): the first never gets a case's data, and gets the
// marker wherever the second gets data.
func (b *dashBundle) checkCaseRoutes(t *testing.T, what string, routes []caseRoute, cases []store.Case) {
	t.Helper()
	api := strings.HasPrefix(what, "api")
	readKey := b.keyWith(t, "reader", auth.ScopeRunsRead)
	caseKey := b.keyWith(t, "case-reader", auth.ScopeRunsRead, auth.ScopeApprovalsWrite)
	for _, r := range routes {
		var denied, allowed servertest.Answer
		if api {
			denied, allowed = b.keyGet(t, readKey, r.path), b.keyGet(t, caseKey, r.path)
		} else {
			denied, allowed = b.get(b.viewer, r.path), b.get(b.approver, r.path)
		}
		if denied.Status != 200 || allowed.Status != 200 {
			t.Errorf("%s %s = %d and %d, want 200", what, r.path, denied.Status, allowed.Status)
			continue
		}
		for i := range cases {
			if secret := fmt.Sprintf("secret-%d", i); strings.Contains(denied.Body, secret) {
				t.Errorf("%s %s shows %s to one who may not read it", what, r.path, secret)
			}
		}
		if !r.shows {
			continue
		}
		if !strings.Contains(allowed.Body, "secret-") {
			t.Errorf("%s %s shows no case data to one who may read it: %.300s", what, r.path, allowed.Body)
		}
		if !strings.Contains(denied.Body, httpx.CaseRedactedReason) {
			t.Errorf("%s %s has no redaction marker: %.300s", what, r.path, denied.Body)
		}
	}
	if a := b.keyGet(t, readKey, "/api/v1/cases/"+cases[0].ID.String()); a.Status != 403 {
		t.Errorf("case with runs:read = %d, want 403", a.Status)
	}
	if a := b.get(b.viewer, "/inbox/cases/"+cases[0].ID.String()+"/data"); a.Status != 403 {
		t.Errorf("case data download for a viewer = %d, want 403", a.Status)
	}
}

func (b *dashBundle) keyWith(t *testing.T, name string, scopes ...auth.Scope) string {
	t.Helper()
	_, key := testdb.APIKey(t, b.store, b.tenant, &testdb.APIKeyOpts{Name: testdb.Ptr(name + uuid.NewString()[:8]), Scopes: scopes})
	return key
}

func (b *dashBundle) keyGet(t *testing.T, key, path string) servertest.Answer {
	t.Helper()
	req, _ := http.NewRequest("GET", b.srvURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return servertest.Answer{Status: res.StatusCode, Body: string(body), Header: res.Header}
}
