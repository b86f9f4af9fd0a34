package pages_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
)

// wideValue is {"x": ["item-0", …]}: n items, far past a preview's size.
func wideValue(n int) map[string]any {
	items := make([]any, n)
	for i := range items {
		items[i] = fmt.Sprintf("item-%d", i)
	}
	return map[string]any{"x": items}
}

// downloadFrom finds the download link matching pattern on the page and
// checks it gives the whole value as an attachment.
func (b *dashBundle) downloadFrom(t *testing.T, br *servertest.Browser, what, page, pattern string, want any) {
	t.Helper()
	m := regexp.MustCompile(`href="(` + pattern + `)"`).FindStringSubmatch(page)
	if m == nil {
		t.Errorf("%s: the page has no download link matching %s", what, pattern)
		return
	}
	raw, _ := json.Marshal(want)
	full := br.Get(b.srvURL + html.UnescapeString(m[1]))
	if full.Status != 200 || full.Body != string(raw) || !strings.Contains(full.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("%s: download = %d, %d bytes (want %d), %q", what, full.Status, len(full.Body), len(raw), full.Header.Get("Content-Disposition"))
	}
}

// Attempt outputs, signal payloads and case data show a bounded preview
// on the pages, with a link that downloads the whole value.
func TestLargeValuesDownloadWhole(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: wide
steps:
  - {ref: echo, type: task, with: {handler: builtin.echo}}
  - {ref: hold, type: signal, with: {name: go}}
  - {ref: review, type: human_loop, with: {title: Review, assignees: ["abe@t.example"], awaiting_status: done}}
edges:
  - {from: echo, to: hold}
  - {from: hold, to: review}
`)
	value := wideValue(3000)
	id := b.start(t, runs.Trigger{Definition: "wide", Input: value})
	b.waitNode(t, id, "hold", engine.NodeWaiting)
	ctx := context.Background()
	if _, err := b.runs.Signal(ctx, b.tenant.ID, id, engine.Signal{RequestID: "big/one", Name: "go", Payload: value}); err != nil {
		t.Fatal(err)
	}
	n := b.waitNode(t, id, "review", engine.NodeWaiting)
	cases, err := b.store.CasesOfRun(ctx, b.tenant.ID, id)
	if err != nil || len(cases) != 1 || n == nil {
		t.Fatalf("cases = %v, %v", cases, err)
	}
	done := "done"
	caseValue := wideValue(3001) // not the other values: equal ones would be redacted as the case's data
	if _, err := b.runs.UpdateCase(ctx, b.tenant.ID, cases[0].ID, runs.CaseChange{Status: &done, Data: caseValue}); err != nil {
		t.Fatal(err)
	}
	b.waitStatus(t, id, engine.RunSucceeded)

	run := "/t/" + b.tenant.Slug + "/runs/" + id.String()
	page := b.get(b.owner, "/runs/"+id.String()+"?node=echo")
	if page.Status != 200 || !strings.Contains(page.Body, "preview cut short") {
		t.Fatalf("run page = %d, no cut preview", page.Status)
	}
	b.downloadFrom(t, b.owner, "attempt output", page.Body, regexp.QuoteMeta(run)+`/json/nodes/echo/attempts/0/1`, value)
	b.downloadFrom(t, b.owner, "signal payload", page.Body, regexp.QuoteMeta(run)+`/json/signals\?request_id=big%2Fone`, value)
	inbox := b.get(b.approver, "/inbox?tab=decided")
	b.downloadFrom(t, b.approver, "case data", inbox.Body, `/t/[^"]+/inbox/cases/`+cases[0].ID.String()+`/data`, caseValue)

	// A member the case is not assigned to does not get its data; a value
	// the run does not have is not found.
	if a := b.get(b.viewer, "/inbox/cases/"+cases[0].ID.String()+"/data"); a.Status != 403 {
		t.Errorf("case data for someone it is not assigned to = %d, want 403", a.Status)
	}
	for _, path := range []string{"/json/nodes/echo/attempts/0/2", "/json/nodes/echo/attempts/x/1", "/json/signals?request_id=nope"} {
		if a := b.get(b.owner, "/runs/"+id.String()+path); a.Status != 404 {
			t.Errorf("%s = %d, want 404", path, a.Status)
		}
	}
}
