package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ductor/ductor/app/testwait"
)

// api sends a request with the dev key and decodes the JSON answer.
func api(t *testing.T, p *program, method, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, p.BaseURL+"/api/v1"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.devKey(t))
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

// publishRun publishes a YAML definition through the API and starts a
// run of it with the input; it returns the run's id.
func publishRun(t *testing.T, p *program, key, doc string, input any) string {
	t.Helper()
	if code, out := api(t, p, "POST", "/definitions/"+key+"/versions", "application/yaml", doc); code != http.StatusCreated {
		t.Fatalf("publish %s: %d %v", key, code, out)
	}
	raw, _ := json.Marshal(map[string]any{"definition": key, "input": input})
	code, out := api(t, p, "POST", "/runs", "application/json", string(raw))
	if code != http.StatusCreated {
		t.Fatalf("start %s: %d %v", key, code, out)
	}
	return out["id"].(string)
}

// waitAPIStatus polls the run through the API until it has the status.
// waitAPIStatus polls the run until it has status and returns it as the
// API showed it then.
func waitAPIStatus(t *testing.T, p *program, id, status string) map[string]any {
	t.Helper()
	var seen map[string]any
	if !testwait.Until(context.Background(), 30*time.Second, func() bool {
		_, run := api(t, p, "GET", "/runs/"+id, "", "")
		seen = run
		return run["status"] == status
	}) {
		t.Fatalf("run %s never %s", id, status)
	}
	return seen
}

func nodeStroke(t *testing.T, ctx context.Context, ref string) string {
	t.Helper()
	js := fmt.Sprintf(`getComputedStyle(document.querySelector('g.gnode[data-ref=%q] rect')).stroke`, ref)
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("read %s's colour: %v", ref, err)
	}
	return s
}

// TestInspectorInChromium: the graph recolours a node while the run
// moves, without a reload; the operator cancels the run from the page; a
// scatter's children page by 50.
func TestInspectorInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	id := publishRun(t, p, "gated", `
key: gated
steps:
  - { ref: start, type: signal, with: { name: start } }
  - { ref: gate, type: signal, with: { name: go } }
edges:
  - { from: start, to: gate }
`, map[string]any{})
	ctx := newBrowser(t)
	dialogs := acceptDialogs(ctx)
	devLogin(t, ctx, p)
	run(t, ctx, "open the inspector", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id),
		chromedp.WaitVisible(chromedp.CSS(`#run-graph g.gnode[data-ref="gate"]`)))
	waitFor(t, ctx, "start to wait", `(() => { const g = document.querySelector('g.gnode[data-ref="start"]'); return g.dataset.state === "waiting"; })()`)
	before := nodeStroke(t, ctx, "start")
	run(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))

	if code, out := api(t, p, "POST", "/runs/"+id+"/signals", "application/json", `{"request_id": "s1", "name": "start"}`); code != http.StatusAccepted {
		t.Fatalf("signal: %d %v", code, out)
	}
	waitFor(t, ctx, "start to turn succeeded and gate to wait", `document.querySelector('g.gnode[data-ref="start"]').dataset.state === "succeeded" &&
		document.querySelector('g.gnode[data-ref="gate"]').dataset.state === "waiting" && window.notReloaded === true`)
	if after := nodeStroke(t, ctx, "start"); after == before {
		t.Errorf("start's colour stayed %s after it succeeded", after)
	}
	if got := text(t, ctx, `[data-state-of="start"]`); got != "succeeded" {
		t.Errorf("the steps table says start is %q", got)
	}

	run(t, ctx, "cancel the run", chromedp.SendKeys(chromedp.CSS("#cancel-reason"), "from the browser"),
		chromedp.Click(chromedp.CSS("#cancel-run")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	waitFor(t, ctx, "the run to show cancelled", `document.getElementById("run-status").textContent === "cancelled" &&
		document.querySelector('g.gnode[data-ref="gate"]').dataset.state === "cancelled"`)
	waitAPIStatus(t, p, id, "cancelled")
	if dialogs.Load() != 1 {
		t.Errorf("cancelling the run asked %d times, want once", dialogs.Load())
	}
	if _, out := api(t, p, "GET", "/runs/"+id, "", ""); out["cancelled_by"] != "user:dev@localhost" || out["reason"] != "from the browser" {
		t.Errorf("the run was cancelled by %v for %v", out["cancelled_by"], out["reason"])
	}

	pageChildren(t, ctx, p)
}

func pageChildren(t *testing.T, ctx context.Context, p *program) {
	t.Helper()
	items := make([]int, 120)
	id := publishRun(t, p, "wide", `
key: wide
limits: {max_inline_children: 500}
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, max_inline_children: 500, do: {type: transform, with: {expr: item}}}
`, map[string]any{"items": items})
	waitAPIStatus(t, p, id, "succeeded")
	run(t, ctx, "open the scatter", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id),
		chromedp.Click(chromedp.CSS(`#steps a[href*="node=fan"]`)),
		chromedp.WaitVisible(chromedp.CSS("#children-list")))
	if n := count(t, ctx, "#children-list tbody tr"); n != 50 || text(t, ctx, "#children-total") != "120" {
		t.Fatalf("first page: %d rows of %s", n, text(t, ctx, "#children-total"))
	}
	run(t, ctx, "next page", chromedp.Click(chromedp.CSS("#children-next")),
		chromedp.WaitVisible(chromedp.CSS(`#children-list tr[data-index="50"]`)))
	run(t, ctx, "last page", chromedp.Click(chromedp.CSS("#children-next")),
		chromedp.WaitVisible(chromedp.CSS(`#children-list tr[data-index="119"]`)))
	if n, next := count(t, ctx, "#children-list tbody tr"), count(t, ctx, "#children-next"); n != 20 || next != 0 {
		t.Fatalf("last page: %d rows, %d next links; want 20 and none", n, next)
	}
}

// TestInboxApproveInChromium: an approval for the owners shows in the
// navigation's badge and the inbox; approving it lets the run finish.
func TestInboxApproveInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	id := publishRun(t, p, "pay", `
key: pay
steps:
  - { ref: ok, type: approval, with: { approvers: [ "role:owner" ], title: Pay the invoice, description: Invoice 42 } }
  - { ref: paid, type: task, with: { handler: builtin.noop } }
edges:
  - { from: ok, to: paid, on: approved }
`, map[string]any{"amount": 42})
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the runs list", chromedp.Navigate(p.BaseURL+"/t/dev/runs"),
		chromedp.WaitVisible(chromedp.CSS(`#runs tr[data-run="`+id+`"]`)))
	waitFor(t, ctx, "the approval to be asked", `(async () => { const r = await fetch(location.pathname + "/`+id+`/live"); const j = await r.json(); return j.nodes.ok && j.nodes.ok.state === "waiting"; })()`)
	run(t, ctx, "reload for the badge", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#inbox-badge")))
	if got := text(t, ctx, "#inbox-badge"); got != "1" {
		t.Fatalf("inbox badge = %q, want 1", got)
	}
	run(t, ctx, "open the inbox", chromedp.Click(chromedp.CSS(`nav.main-nav a[href$="/inbox"]`)),
		chromedp.WaitVisible(chromedp.CSS("article.approval")))
	if got := text(t, ctx, "article.approval h2"); !strings.Contains(got, "Pay the invoice") {
		t.Fatalf("the inbox shows %q", got)
	}
	run(t, ctx, "approve", chromedp.SendKeys(chromedp.CSS(`article.approval textarea[name="comment"]`), "paid"),
		chromedp.Click(chromedp.CSS("article.approval button.approve")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	if n := count(t, ctx, "article.approval"); n != 0 {
		t.Errorf("the decided approval is still pending in the inbox")
	}
	// Clicked from script: the element is looked up when the click happens,
	// so a page still settling after the redirect cannot hand the click a
	// node it has since replaced.
	run(t, ctx, "see it decided", chromedp.Evaluate[chromedp.Void](`document.getElementById("tab-decided").click()`),
		chromedp.WaitVisible(chromedp.CSS("article.approval .decision")))
	if got := text(t, ctx, "article.approval .decision"); !strings.Contains(got, "dev@localhost approved") {
		t.Errorf("decision shown as %q", got)
	}
	run(t, ctx, "follow the run", chromedp.Click(chromedp.CSS(`article.approval a[href$="/runs/`+id+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#run-status")))
	waitFor(t, ctx, "the run to finish", `document.getElementById("run-status").textContent === "succeeded" &&
		document.querySelector('g.gnode[data-ref="paid"]').dataset.state === "succeeded"`)
}

// TestInboxCaseInChromium works a human_loop case from the inbox: its
// card shows the run's input and a form built from the case's fields;
// a value the schema refuses is shown on its field and nothing is saved;
// saved valid at the awaiting status, the case closes and the run goes on
// with the case's data.
func TestInboxCaseInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	id := publishRun(t, p, "triage", `
key: triage
steps:
  - ref: look
    type: human_loop
    with:
      title: Triage the report
      assignees: ['role:owner']
      fields:
        type: object
        required: [severity]
        properties:
          severity: {enum: [low, high]}
          note: {type: string, maxLength: 20}
          hours: {type: integer, minimum: 0}
  - { ref: done, type: transform, with: { expr: 'steps.look.output.severity' } }
edges:
  - { from: look, to: done }
`, map[string]any{"report": "the printer is on fire"})
	waitAPI(t, p, "/runs/"+id, "the case to be opened", func(r map[string]any) bool { return r["status"] == "waiting" })
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the inbox", chromedp.Navigate(p.BaseURL+"/t/dev/inbox"),
		chromedp.WaitVisible(chromedp.CSS("article.case form.case-form")))
	if got := text(t, ctx, "article.case h2"); !strings.Contains(got, "Triage the report") {
		t.Fatalf("the case card says %q", got)
	}
	if !strings.Contains(text(t, ctx, "article.case details pre"), "the printer is on fire") {
		t.Errorf("the case card does not show the run's input")
	}
	if n := count(t, ctx, `article.case select[name="field.severity"] option`); n != 3 {
		t.Errorf("the severity field has %d options, want the two values and none", n)
	}
	shoot(t, ctx, "inbox-case")
	run(t, ctx, "save a value the schema refuses", chromedp.SetValue(chromedp.CSS(`article.case select[name="field.severity"]`), "high"),
		chromedp.SetValue(chromedp.CSS(`article.case input[name="field.hours"]`), "-3"),
		chromedp.SetValue(chromedp.CSS(`article.case input.case-status`), "resolved"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("article.case form.case-form").noValidate = true`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("article.case button.save-case").click()`),
		chromedp.WaitVisible(chromedp.CSS(`article.case label[data-field="hours"] .field-error`)))
	if got := text(t, ctx, `article.case label[data-field="hours"] .field-error`); got == "" {
		t.Errorf("the refused field shows no error")
	}
	status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("article.case input.case-status").value`))
	if err != nil {
		t.Fatal(err)
	}
	if got := status; got != "resolved" {
		t.Errorf("after a refused save the status field says %q, want what was typed", got)
	}
	shoot(t, ctx, "inbox-case-refused")
	if _, r := api(t, p, "GET", "/runs/"+id, "", ""); r["status"] != "waiting" {
		t.Fatalf("after a refused save the run is %v", r["status"])
	}
	run(t, ctx, "save it valid", chromedp.SetValue(chromedp.CSS(`article.case input[name="field.hours"]`), "2"),
		chromedp.SetValue(chromedp.CSS(`article.case input.case-status`), "resolved"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("article.case button.save-case").click()`),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	r := waitAPI(t, p, "/runs/"+id, "the run to go on", func(r map[string]any) bool { return r["status"] == "succeeded" })
	if out, _ := r["output"].(map[string]any); out == nil || out["done"] != "high" {
		t.Errorf("the run ended with output %v, want the case's severity", r["output"])
	}
}
