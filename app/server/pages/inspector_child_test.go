package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// A failed child among many is found by the failed count, opened at its
// own address and retried alone; the redirect keeps it selected, and it
// runs again (a second attempt) while its siblings keep their outcomes.
func TestInspectorRetriesAFailedChild(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: fan
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, do: {type: transform, with: {expr: 'item == 3 ? 1 / (item - 3) : item'}}}
  - { ref: all, type: gather, with: { scatter_ref: fan, strategy: raise } }
edges:
  - { from: fan, to: all }
`)
	id := b.start(t, runs.Trigger{Definition: "fan", Input: map[string]any{"items": []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}})
	b.waitStatus(t, id, engine.RunFailed)
	run := "/runs/" + id.String()

	scatter := b.get(b.owner, run+"?node=fan")
	wantPage(t, "scatter", scatter, http.StatusOK, `data-count="failed"`, "failed 1", `href="`+b.base+run+`?node=fan&amp;state=failed#children"`)
	failed := b.get(b.owner, run+"?node=fan&state=failed")
	wantPage(t, "failed children", failed, http.StatusOK, `data-index="3"`, `id="retry-child-3"`, "expression_error")
	if strings.Contains(failed.Body, `data-index="4"`) {
		t.Error("the failed filter lists a succeeded child")
	}
	child := b.get(b.owner, run+"?node="+url.QueryEscape("fan[3]"))
	wantPage(t, "the child", child, http.StatusOK, `id="node-error"`, `id="retry-node"`, `id="node-input">3`, `id="node-history"`)
	if strings.Contains(b.get(b.viewer, run+"?node="+url.QueryEscape("fan[3]")).Body, `id="retry-node"`) {
		t.Error("a viewer is offered the retry")
	}

	retried := b.post(b.owner, run+"/retry", url.Values{"node": {"fan[3]"}, "here": {"node=fan%5B3%5D"}})
	wantRedirect(t, "retry a child", retried, run+"?done=retry&node=fan%5B3%5D#node")
	b.waitNodeWhere(t, id, "fan[3]", "a second attempt", func(n *engine.Node) bool { return n.Attempt == 2 && n.State.Terminal() })
	r := b.waitStatus(t, id, engine.RunFailed)
	if r.State.Error == nil || r.State.Error.Node != "all" {
		t.Errorf("after the retry the run failed with %+v, want the gather again", r.State.Error)
	}
	again := b.get(b.owner, run+"?node="+url.QueryEscape("fan[3]"))
	wantPage(t, "the child after its retry", again, http.StatusOK, "retried 1×", `<span class="muted small">retry</span>`)
	wantPage(t, "a sibling", b.get(b.owner, run+"?node="+url.QueryEscape("fan[4]")), http.StatusOK, `id="node-state">succeeded`)
}

// The inspector's stream tells the state at once, and for an ended run
// with nothing to come, that it is over.
func TestInspectorStreamEndsWithTheRun(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, "key: quick\nsteps:\n  - { ref: a, type: transform, with: { expr: '1' } }\n")
	id := b.start(t, runs.Trigger{Definition: "quick"})
	b.waitStatus(t, id, engine.RunSucceeded)
	a := b.get(b.viewer, "/runs/"+id.String()+"/events")
	if a.Status != http.StatusOK || a.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events = %d %s", a.Status, a.Header.Get("Content-Type"))
	}
	if !strings.Contains(a.Body, "event: run\ndata: {\"status\":\"succeeded\"") || !strings.HasSuffix(a.Body, "event: end\ndata: {\"status\":\"succeeded\"}\n\n") {
		t.Errorf("the stream of an ended run:\n%s", a.Body)
	}
	wantPage(t, "another tenant's run", b.get(b.viewer, "/runs/"+b.tenant.ID.String()+"/events"), http.StatusNotFound)
}

// A trailing slash on a dashboard page redirects to the page; the
// favicon is served.
func TestTrailingSlashesAndFavicon(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	for _, path := range []string{"/", "/runs/", "/inbox/", "/runs/?status=failed"} {
		a := b.get(b.viewer, path)
		want := b.base + strings.Replace(strings.TrimSuffix(path, "/"), "/?", "?", 1)
		if a.Status != http.StatusMovedPermanently || a.Location != want || a.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s = %d to %q, want a redirect to %q with the security headers", path, a.Status, a.Location, want)
		}
	}
	if a := b.viewer.Get(b.srvURL + "/t//evil.example/"); a.Status == http.StatusMovedPermanently && strings.HasPrefix(a.Location, "//") {
		t.Errorf("a doubled slash redirects off the site: %q", a.Location)
	}
	icon := b.viewer.Get(b.srvURL + "/favicon.ico")
	if icon.Status != http.StatusMovedPermanently || !strings.Contains(icon.Location, "/static/img/favicon.") {
		t.Fatalf("favicon.ico = %d to %q", icon.Status, icon.Location)
	}
	if svg := b.viewer.Get(b.srvURL + icon.Location); svg.Status != 200 || svg.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("the favicon = %d %s", svg.Status, svg.Header.Get("Content-Type"))
	}
	wantPage(t, "a page", b.get(b.viewer, "/runs"), http.StatusOK, `rel="icon"`)
}

// A subworkflow step links to the run it started, in the graph and in its
// panel, and the run's duration is shown.
func TestInspectorLinksSubworkflowsToTheirRuns(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, "key: inner\nsteps:\n  - { ref: work, type: task, with: { handler: builtin.noop } }\n")
	b.publish(t, "key: outer\nsteps:\n  - { ref: sub, type: subworkflow, with: { workflow: inner } }\n")
	id := b.start(t, runs.Trigger{Definition: "outer"})
	b.waitStatus(t, id, engine.RunSucceeded)
	kids, err := b.store.RunList(context.Background(), b.tenant.ID, store.RunFilter{ParentID: &id, Limit: 10})
	if err != nil || len(kids) != 1 {
		t.Fatalf("child runs %v, %v", kids, err)
	}
	child := b.base + "/runs/" + kids[0].ID.String()
	page := b.get(b.owner, "/runs/"+id.String())
	wantPage(t, "the run", page, http.StatusOK, `href="`+child+`" class="gchild-link" data-child-of="sub"`, `id="run-duration"`)
	panel := b.get(b.owner, "/runs/"+id.String()+"?node=sub")
	wantPage(t, "the step", panel, http.StatusOK, `id="node-child-run" href="`+child+`"`)
}
