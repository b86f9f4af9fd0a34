package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// flakyServer answers 200 to every item but one, which fails the first
// time it is asked for.
func flakyServer(t *testing.T, bad string) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		item := strings.TrimPrefix(r.URL.Path, "/item/")
		mu.Lock()
		seen[item]++
		n := seen[item]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if item == bad && n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error": "try later"}`))
			return
		}
		_, _ = fmt.Fprintf(w, `{"item": %q, "size": "64x64"}`, item)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFindAndRetryAFailedChildAmong2000InChromium: of 2,000 children one
// failed; the failed count finds it, it opens at its own address with its
// input, error, attempts and history, and retried alone it succeeds; the
// page follows the retry live, keeping the child selected, and the run
// ends succeeded.
func TestFindAndRetryAFailedChildAmong2000InChromium(t *testing.T) {
	t.Parallel()
	srv := flakyServer(t, "402")
	p := startDevAllowing(t)
	items := make([]string, 2000)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	id := publishRun(t, p, "resize", fmt.Sprintf(`
key: resize
limits: {max_inline_children: 2000}
steps:
  - ref: resize
    type: scatter
    with:
      items_expr: input.items
      max_inline_children: 2000
      do: {type: http, retry: {max_attempts: 1}, with: {url_expr: '"%s/item/" + item'}}
  - { ref: all, type: gather, with: { scatter_ref: resize, strategy: raise } }
edges:
  - { from: resize, to: all }
`, srv.URL), map[string]any{"items": items})
	waitAPI(t, p, "/runs/"+id, "the run to fail", func(r map[string]any) bool { return r["status"] == "failed" })

	ctx := newBrowser(t)
	dialogs := acceptDialogs(ctx)
	devLogin(t, ctx, p)
	run(t, ctx, "open the run", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id),
		chromedp.Click(chromedp.CSS(`#run-graph a.gnode-link[href*="node=resize"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#children-counts [data-count="failed"]`)))
	if got := text(t, ctx, `#children-counts [data-count="failed"]`); got != "failed 1" {
		t.Fatalf("the failed count says %q", got)
	}
	// The scatter succeeded, and its graph box and Steps row say that a
	// child failed, the row with a link to it.
	if got := text(t, ctx, `#run-graph g.gnode.some-failed[data-ref="resize"] .gfailed`); got != "1 failed" {
		t.Errorf("the scatter's box says %q of its failed child", got)
	}
	if got := text(t, ctx, `#run-graph g.gnode[data-ref="resize"] title`); !strings.Contains(got, "1 failed, 2000/2000 children ended") {
		t.Errorf("the scatter's box is titled %q", got)
	}
	if got := attrOf(t, ctx, `#steps tr[data-ref="resize"] a.children-failed`, "href"); !strings.Contains(got, "node=resize&state=failed") {
		t.Errorf("the Steps row links its failed children to %q", got)
	}
	// The panel of the finished 2,000-child scatter stays small: its
	// output shown once, collapsed, as a bounded preview.
	size, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(async () => (await (await fetch(location.href)).text()).length)()`, chromedp.EvalAwaitPromise))
	if err != nil || size <= 0 || size > 300<<10 {
		t.Errorf("the scatter's page weighs %v bytes (%v), want under 300 KB", size, err)
	}
	if open, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("node-output-details").open`)); open {
		t.Errorf("the scatter's output is open by default")
	}
	if n := count(t, ctx, "#node pre.json, #node .json pre"); n > 2 {
		t.Errorf("the scatter's panel shows %d JSON blocks, want its input and its output once", n)
	}
	if got := text(t, ctx, "#attempts tbody tr td:last-child"); got != "the output above" {
		t.Errorf("the scatter's attempt repeats its output: %q", got)
	}
	shoot(t, ctx, "inspector-scatter")
	// One click reaches where the run failed in its 6,000-entry history.
	run(t, ctx, "jump to the failure", chromedp.Click(chromedp.CSS("#history-failure")),
		chromedp.WaitVisible(chromedp.CSS(`#timeline .status.failed`)))
	if !strings.Contains(text(t, ctx, "#timeline"), "resize[402]") || count(t, ctx, "#history-last") != 1 || count(t, ctx, "#history-prev") != 1 {
		t.Errorf("the page of the failure does not show the failed child, or lacks its way to the last and previous pages")
	}
	run(t, ctx, "back to the scatter", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?node=resize"),
		chromedp.WaitVisible(chromedp.CSS(`#children-counts [data-count="failed"]`)))
	run(t, ctx, "show the failed children", chromedp.Click(chromedp.CSS(`#children-counts [data-count="failed"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#children-list tr[data-index="402"]`)))
	if n := count(t, ctx, "#children-list tbody tr"); n != 1 {
		t.Fatalf("the failed filter lists %d children, want 1", n)
	}
	// The list may be re-rendered between finding the link and clicking
	// it (a live update), so the click finds and clicks in one step.
	run(t, ctx, "open the child", chromedp.Evaluate[chromedp.Void](`document.querySelector('#children-list tr[data-index="402"] a.child-link').click()`),
		chromedp.WaitVisible(chromedp.CSS("#node-error")))
	if loc := location(t, ctx); !strings.Contains(loc, "node=resize%5B402%5D") {
		t.Fatalf("the child's page is %s, want its own address", loc)
	}
	if got := text(t, ctx, "#node-error"); !strings.Contains(got, "503") {
		t.Errorf("the child's error says %q", got)
	}
	if got := text(t, ctx, "#node-input"); got != `"402"` || count(t, ctx, "#attempts tbody tr") != 1 || count(t, ctx, "#node-history li") < 3 {
		t.Errorf("the child's panel: input %q, %d attempts, %d transitions", got, count(t, ctx, "#attempts tbody tr"), count(t, ctx, "#node-history li"))
	}
	shoot(t, ctx, "inspector-child")

	run(t, ctx, "retry the child", chromedp.Click(chromedp.CSS("#retry-node")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	if dialogs.Load() != 1 {
		t.Errorf("%d confirmations before the retry, want 1", dialogs.Load())
	}
	if loc := location(t, ctx); !strings.Contains(loc, "node=resize%5B402%5D") || !strings.Contains(loc, "done=retry") {
		t.Errorf("after the retry the page is %s, want the child still selected", loc)
	}
	run(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	waitFor(t, ctx, "the child and the run to succeed, live", `document.getElementById("node-state").textContent === "succeeded" &&
		document.getElementById("run-status").textContent === "succeeded" && window.notReloaded === true`)
	if n := count(t, ctx, "#attempts tbody tr"); n != 2 {
		t.Errorf("after the retry the child shows %d attempts, want 2", n)
	}
}

// TestInspectorCountsMoveLiveInChromium: while a scatter runs, its
// counts and children move on the open page without a reload, and the
// stream ends with the run.
func TestInspectorCountsMoveLiveInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	// 30 children two at a time for 0.8 s each: about 12 s, so a page that
	// refreshes about once a second sees several counts even on a loaded
	// machine, where the browser can take seconds to open it.
	items := make([]int, 30)
	id := publishRun(t, p, "slow", `
key: slow
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, concurrency: 2, do: {type: task, with: {handler: builtin.sleep, input_expr: '{"ms": 800}'}}}
`, map[string]any{"items": items})
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the scatter", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?node=fan"),
		chromedp.WaitVisible(chromedp.CSS("#children-counts")))
	run(t, ctx, "watch the counts", chromedp.Evaluate[chromedp.Void](`(() => {
		window.notReloaded = true;
		window.seen = new Set();
		const note = () => { const c = document.querySelector('#children-counts [data-count="succeeded"]'); window.seen.add(c ? c.textContent : "none"); };
		note();
		new MutationObserver(note).observe(document.getElementById("node-region"), { childList: true, subtree: true });
	})()`))
	waitAPI(t, p, "/runs/"+id, "the run to succeed", func(r map[string]any) bool { return r["status"] == "succeeded" })
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const c = document.querySelector('#children-counts [data-count="succeeded"]');
		return c && c.textContent === "succeeded 30" && document.getElementById("run-status").textContent === "succeeded" && window.notReloaded;
	})()`, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({counts: document.getElementById("children-counts").textContent, status: document.getElementById("run-status").textContent, live: document.getElementById("inspector").dataset.live, reloaded: !window.notReloaded, seen: [...window.seen]})`))
		t.Fatalf("the page did not follow the run: %s", state)
	}
	if n := jsNum(ctx, t, `window.seen.size`); n < 3 {
		t.Errorf("the succeeded count took %v values while the page was open, want it to move", n)
	}
	waitFor(t, ctx, "the stream to end with the run", `document.getElementById("inspector").dataset.live === "ended"`)
}

// TestZoomAndFitA30StepGraphInChromium: a 30-step graph is laid out top
// to bottom, zooms in and out, fits whole in its box, has a minimap, and
// its edges are reached with the keyboard; the editor fits it too.
func TestZoomAndFitA30StepGraphInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	var doc strings.Builder
	doc.WriteString("key: deep\nsteps:\n")
	for i := range 30 {
		fmt.Fprintf(&doc, "  - { ref: step_%02d, type: transform, with: { expr: '%d' } }\n", i, i)
	}
	doc.WriteString("edges:\n")
	for i := range 29 {
		fmt.Fprintf(&doc, "  - { from: step_%02d, to: step_%02d }\n", i, i+1)
	}
	id := publishRun(t, p, "deep", doc.String(), map[string]any{})
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the run", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id),
		chromedp.WaitVisible(chromedp.CSS("#graph-fit")))
	if attr(t, ctx, "#run-graph", "layout") != "tb" {
		t.Errorf("a 30-step graph is laid out %q, want tb", attr(t, ctx, "#run-graph", "layout"))
	}
	scale := func() float64 { return jsNum(ctx, t, `Number(document.getElementById("run-graph").dataset.scale)`) }
	start := scale()
	run(t, ctx, "zoom in", chromedp.Click(chromedp.CSS("#graph-zoom-in")))
	if in := scale(); in <= start {
		t.Errorf("zoom in: scale %v → %v", start, in)
	}
	run(t, ctx, "zoom out twice", chromedp.Click(chromedp.CSS("#graph-zoom-out")), chromedp.Click(chromedp.CSS("#graph-zoom-out")))
	if out := scale(); out >= start {
		t.Errorf("zoom out: scale %v, want below %v", out, start)
	}
	run(t, ctx, "fit", chromedp.Click(chromedp.CSS("#graph-fit")))
	inView := `(() => {
		const svg = document.getElementById("run-graph"), wrap = document.getElementById("graph-wrap").getBoundingClientRect();
		return [...svg.querySelectorAll("g.gnode rect")].every((r) => {
			const b = r.getBoundingClientRect();
			return b.left >= wrap.left - 1 && b.right <= wrap.right + 1 && b.top >= wrap.top - 1 && b.bottom <= wrap.bottom + 1;
		});
	})()`
	waitFor(t, ctx, "every step in view after Fit", inView)
	if n := count(t, ctx, "#graph-minimap svg use"); n != 1 {
		t.Errorf("%d minimaps", n)
	}
	if n := count(t, ctx, `#run-graph g.gedge[tabindex="0"]`); n != 29 {
		t.Errorf("%d edges reachable by keyboard, want 29", n)
	}
	run(t, ctx, "focus an edge", chromedp.Evaluate[chromedp.Void](`document.querySelector('#run-graph g.gedge[data-from="step_10"]').focus()`))
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.getAttribute("aria-label")`)); !strings.Contains(got, "step_10 → step_11") || !strings.Contains(got, "fired") {
		t.Errorf("the focused edge is named %q", got)
	}
	shoot(t, ctx, "inspector-deep")
	// Tab goes from a step to the edges that leave it; Enter on a step
	// opens it, and the keyboard goes on from its panel.
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const all = [...document.querySelectorAll('#run-graph a.gnode-link, #run-graph g.gedge')];
		const i = all.findIndex((el) => el.matches('a.gnode-link[href*="node=step_10"]'));
		return all[i + 1] ? all[i + 1].dataset.from || "" : "";
	})()`)); got != "step_10" {
		t.Errorf("after step_10 the Tab order reaches an edge from %q, want one from step_10", got)
	}
	run(t, ctx, "open step_10 from the keyboard", chromedp.Evaluate[chromedp.Void](`document.querySelector('#run-graph a.gnode-link[href*="node=step_10"]').focus()`),
		chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS("#node-h")))
	waitFor(t, ctx, "the focus on the opened step's panel", `document.activeElement && document.activeElement.id === "node"`)

	run(t, ctx, "open the editor", chromedp.Navigate(p.BaseURL+"/t/dev/definitions/deep/edit"),
		chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
	if attr(t, ctx, "#graph", "layout") != "tb" {
		t.Errorf("the editor lays 30 steps out %q, want tb", attr(t, ctx, "#graph", "layout"))
	}
	run(t, ctx, "fit in the editor", chromedp.Click(chromedp.CSS("#zoom-fit")))
	waitFor(t, ctx, "every step in the editor's view", `(() => {
		const box = document.getElementById("graph").getBoundingClientRect();
		return [...document.querySelectorAll("#graph g.node rect")].every((r) => {
			const b = r.getBoundingClientRect();
			return b.left >= box.left - 1 && b.right <= box.right + 1 && b.top >= box.top - 1 && b.bottom <= box.bottom + 1;
		});
	})()`)
	if n := count(t, ctx, `#graph g.edge[tabindex="0"]`); n != 29 {
		t.Errorf("%d editor edges reachable by keyboard, want 29", n)
	}
	shoot(t, ctx, "editor-deep")
}

// TestBulkCancelByFilterInChromium: every run a search matches is
// cancelled from the runs list in the background; the batch page follows
// the progress to the end, and the runs outside the filter are left.
func TestBulkCancelByFilterInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	if code, out := api(t, p, "POST", "/definitions/parked/versions", "application/yaml",
		"key: parked\nsteps:\n  - { ref: hold, type: signal, with: { name: never } }\n"); code != http.StatusCreated {
		t.Fatalf("publish: %d %v", code, out)
	}
	// 121 starts are more than the dev key's burst: a start refused with
	// 429 is sent again after the second its Retry-After asks for, as a
	// client would.
	start := func(subject string) string {
		raw, _ := json.Marshal(map[string]any{"definition": "parked", "subject": subject})
		for try := 0; ; try++ {
			code, out := api(t, p, "POST", "/runs", "application/json", string(raw))
			if code == http.StatusTooManyRequests && try < 10 {
				<-time.After(time.Second) // the Retry-After of the key's rate limit
				continue
			}
			if code != http.StatusCreated {
				t.Fatalf("start: %d %v", code, out)
			}
			return out["id"].(string)
		}
	}
	var bulk []string
	for i := range 120 {
		bulk = append(bulk, start(fmt.Sprintf("bulk-%03d", i)))
	}
	keep := start("keep-1")
	waitAPI(t, p, "/runs?q=bulk-&status=waiting&count=true&limit=1", "the runs to wait", func(r map[string]any) bool { return r["total"] == 120.0 })

	ctx := newBrowser(t)
	dialogs := acceptDialogs(ctx)
	devLogin(t, ctx, p)
	run(t, ctx, "search the runs", chromedp.Navigate(p.BaseURL+"/t/dev/runs"),
		chromedp.SendKeys(chromedp.CSS("#filter-q"), "bulk-"),
		chromedp.Click(chromedp.CSS("#apply-filters")),
		chromedp.WaitReady(chromedp.CSS(`#filter-q[value="bulk-"]`)), // the filtered page, not the one before
		chromedp.WaitVisible(chromedp.CSS("#select-matching")))
	if got := text(t, ctx, "#runs-total"); got != "120 runs" {
		t.Fatalf("the search counts %q", got)
	}
	shoot(t, ctx, "runs")
	run(t, ctx, "select every matching run", chromedp.Click(chromedp.CSS("#select-matching")))
	if got := text(t, ctx, "#selected-count"); got != "all 120 runs matching this filter" {
		t.Errorf("the selection says %q", got)
	}
	run(t, ctx, "bulk cancel", chromedp.SendKeys(chromedp.CSS("#bulk-reason"), "end of the pilot"),
		chromedp.Click(chromedp.CSS("#bulk-cancel")),
		chromedp.WaitVisible(chromedp.CSS("#batch-progress")))
	if dialogs.Load() != 1 {
		t.Errorf("%d confirmations, want 1", dialogs.Load())
	}
	shoot(t, ctx, "batch")
	waitFor(t, ctx, "the batch to finish on its page", `document.getElementById("batch-status").textContent === "completed" &&
		document.getElementById("batch-counts").textContent === "120 of 120 cancelled, 0 failed"`)
	if v := jsNum(ctx, t, `document.getElementById("batch-progress").value`); v != 120 {
		t.Errorf("the progress bar stands at %v, want 120", v)
	}
	for _, id := range bulk[:3] {
		r := waitAPI(t, p, "/runs/"+id, "the run to be cancelled", func(r map[string]any) bool { return r["status"] == "cancelled" })
		if r["reason"] != "end of the pilot" || r["cancelled_by"] != "user:dev@localhost" {
			t.Errorf("run %s cancelled with reason %v by %v", id, r["reason"], r["cancelled_by"])
		}
	}
	if _, r := api(t, p, "GET", "/runs/"+keep, "", ""); r["status"] != "waiting" {
		t.Errorf("the run outside the filter is %v", r["status"])
	}
	run(t, ctx, "back to the runs", chromedp.Navigate(p.BaseURL+"/t/dev/runs?q=bulk-&status=cancelled"),
		chromedp.WaitVisible(chromedp.CSS("#batches")))
	if got := text(t, ctx, "#runs-total"); got != "120 runs" {
		t.Errorf("cancelled bulk runs: %q", got)
	}

	// The first page refreshes itself: a run started elsewhere appears.
	run(t, ctx, "open the kept runs", chromedp.Navigate(p.BaseURL+"/t/dev/runs?q=keep-"),
		chromedp.WaitVisible(chromedp.CSS("#runs-body tr")),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	if got := text(t, ctx, "#runs-total"); got != "1 run" {
		t.Errorf("kept runs: %q", got)
	}
	late := start("keep-2")
	waitFor(t, ctx, "the new run to appear live", `window.notReloaded === true && document.getElementById("runs-total").textContent === "2 runs" &&
		!!document.querySelector('#runs-body a[href$="/runs/`+late+`"]')`)
}

// TestTwoPersonApprovalInChromium: of an approval that needs two people,
// the first decides; the card then says 1 of 2 and whom it still waits
// for, and the run keeps waiting.
func TestTwoPersonApprovalInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	raw, _ := json.Marshal(map[string]any{"definition": "pay", "subject": "invoice-42", "input": map[string]any{"amount": 1250, "vendor": "ACME"}})
	if code, out := api(t, p, "POST", "/definitions/pay/versions", "application/yaml", `
key: pay
steps:
  - { ref: ok, type: approval, with: { approvers: [ "dev@localhost", "bob@example.com" ], min_approvals: 2, title: Pay the invoice } }
  - { ref: paid, type: task, with: { handler: builtin.noop } }
edges:
  - { from: ok, to: paid, on: approved }
`); code != http.StatusCreated {
		t.Fatalf("publish: %d %v", code, out)
	}
	code, started := api(t, p, "POST", "/runs", "application/json", string(raw))
	if code != http.StatusCreated {
		t.Fatalf("start: %d %v", code, started)
	}
	id := started["id"].(string)
	waitAPI(t, p, "/runs/"+id, "the approval to be asked", func(r map[string]any) bool { return r["status"] == "waiting" })

	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the inbox", chromedp.Navigate(p.BaseURL+"/t/dev/inbox"),
		chromedp.WaitVisible(chromedp.CSS("article.approval")))
	if got := text(t, ctx, "article.approval .progress"); !strings.Contains(got, "0 of 2 approved") || !strings.Contains(got, "waiting for dev@localhost, bob@example.com") {
		t.Errorf("before any decision the card says %q", got)
	}
	if got := text(t, ctx, "article.approval .run-subject"); got != "invoice-42" {
		t.Errorf("the card's subject is %q", got)
	}
	if !strings.Contains(text(t, ctx, "article.approval details pre"), `"vendor": "ACME"`) {
		t.Errorf("the card does not show the run's input")
	}
	shoot(t, ctx, "inbox-approval")
	run(t, ctx, "approve", chromedp.SendKeys(chromedp.CSS(`article.approval textarea[name="comment"]`), "fine by me"),
		chromedp.Click(chromedp.CSS("article.approval button.approve")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	run(t, ctx, "see it decided", chromedp.Click(chromedp.CSS("#tab-decided")),
		chromedp.WaitVisible(chromedp.CSS("article.approval .decision")))
	if got := text(t, ctx, "article.approval .progress"); !strings.Contains(got, "1 of 2 approved") || !strings.Contains(got, "waiting for bob@example.com") || strings.Contains(got, "dev@localhost") {
		t.Errorf("after the first decision the card says %q", got)
	}
	shoot(t, ctx, "inbox-decided")
	if _, r := api(t, p, "GET", "/runs/"+id, "", ""); r["status"] != "waiting" {
		t.Errorf("after one of two approvals the run is %v", r["status"])
	}
	run(t, ctx, "open the step", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?node=ok"),
		chromedp.WaitVisible(chromedp.CSS("#node")))
	if got := text(t, ctx, "#node dl.facts"); !strings.Contains(got, "1 of 2 approved · waiting for bob@example.com") {
		t.Errorf("the inspector's step says %q", got)
	}
}

// TestEditorRefusesAnInvalidDraftInChromium: a draft that does not parse
// is refused with the error shown and the saved draft kept; the editor
// warns before its work is left, undoes and redoes, and marks where a CEL
// expression is wrong.
func TestEditorRefusesAnInvalidDraftInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "draft")
	run(t, ctx, "add a step", chromedp.Click(chromedp.CSS(`.palette-item[data-type="transform"]`)),
		chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="transform_1"]`)))
	waitFor(t, ctx, "it to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	run(t, ctx, "save the draft", chromedp.Click(chromedp.CSS("#save-draft")))
	waitFor(t, ctx, "the draft to be saved", `document.getElementById("notice").textContent.startsWith("Draft saved") && document.getElementById("editor").dataset.dirty === "false"`)

	// Undo and redo.
	run(t, ctx, "add another step", chromedp.Click(chromedp.CSS(`.palette-item[data-type="task"]`)),
		chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="task_1"]`)))
	waitFor(t, ctx, "the change to count", `document.getElementById("editor").dataset.dirty === "true" && !document.getElementById("undo").disabled`)
	run(t, ctx, "undo", chromedp.Click(chromedp.CSS("#undo")))
	waitFor(t, ctx, "the step to go", `!document.querySelector('g.node[data-ref="task_1"]') && !document.getElementById("yaml").value.includes("task_1")`)
	run(t, ctx, "redo", chromedp.Click(chromedp.CSS("#redo")))
	waitFor(t, ctx, "the step to come back", `!!document.querySelector('g.node[data-ref="task_1"]') && document.getElementById("yaml").value.includes("task_1")`)

	// The leave guard stops an unload while work is unsaved.
	guarded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const ev = new Event("beforeunload", { cancelable: true });
		window.dispatchEvent(ev);
		return ev.defaultPrevented;
	})()`))
	if err != nil || !guarded {
		t.Errorf("leaving with unsaved work is not guarded (%v)", err)
	}

	// A readable CEL error with its place marked.
	run(t, ctx, "select the transform", chromedp.Evaluate[chromedp.Void](`document.querySelector('g.node[data-ref="transform_1"] rect').dispatchEvent(new MouseEvent("click", {bubbles: true}))`),
		chromedp.WaitVisible(chromedp.CSS(`#panel [data-path="with.expr"]`)))
	typeInto(t, ctx, `#panel [data-path="with.expr"]`, "input.x +* 2")
	waitFor(t, ctx, "the CEL error", `!!document.querySelector('#panel [data-field="with.expr"] .cel-caret mark')`)
	if got := text(t, ctx, `#panel [data-field="with.expr"] .field-error.server`); !strings.Contains(got, "unexpected “*” (line 1, column 10)") || strings.Contains(got, "expecting") {
		t.Errorf("the CEL error says %q", got)
	}
	if got := text(t, ctx, `#panel [data-field="with.expr"] .cel-caret mark`); got != "*" {
		t.Errorf("the caret marks %q, want *", got)
	}
	shoot(t, ctx, "editor-cel-error")

	// A draft that does not parse is refused, and the saved one kept.
	run(t, ctx, "break the YAML", chromedp.Evaluate[chromedp.Void](`(() => {
		const y = document.getElementById("yaml");
		y.value = "key: draft\nsteps: [ {ref: a, type: transform\n";
		y.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	run(t, ctx, "save it", chromedp.Click(chromedp.CSS("#save-draft")))
	waitFor(t, ctx, "the refusal", `document.getElementById("notice").classList.contains("error") && document.getElementById("notice").textContent.startsWith("not saved")`)
	shoot(t, ctx, "editor-refused")
	code, body := get(t, p.BaseURL+"/api/v1/definitions/draft", p.devKey(t))
	if code != 200 || !strings.Contains(body, "transform_1") || strings.Contains(body, "{ref: a, type: transform") {
		t.Errorf("after the refusal the stored draft is %d %s", code, body)
	}
}

// TestDashboardPagesInChromium keeps a screenshot of every other page at
// both widths and in both themes: home, definitions, schedules, webhooks,
// settings, keys (just after creating one), members and the audit log.
func TestDashboardPagesInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	if code, out := api(t, p, "POST", "/definitions/nightly/versions", "application/yaml",
		"key: nightly\nsteps:\n  - { ref: report, type: task, with: { handler: builtin.noop } }\n"); code != http.StatusCreated {
		t.Fatalf("publish: %d %v", code, out)
	}
	if code, out := api(t, p, "POST", "/schedules", "application/json", `{"id": "nightly", "definition": "nightly", "spec": {"cron": "0 2 * * *", "timezone": "Europe/Paris"}}`); code >= 300 {
		t.Fatalf("schedule: %d %v", code, out)
	}
	ctx := newBrowser(t)
	acceptDialogs(ctx)
	devLogin(t, ctx, p)
	for _, page := range []struct{ name, path string }{
		{"home", "/t/dev"}, {"definitions", "/t/dev/definitions"}, {"schedules", "/t/dev/schedules"},
		{"webhooks", "/t/dev/webhooks"}, {"settings", "/t/dev/settings"}, {"members", "/t/dev/settings/members"},
		{"inbox-empty", "/t/dev/inbox/"},
	} {
		run(t, ctx, "open "+page.path, chromedp.Navigate(p.BaseURL+page.path), chromedp.WaitVisible(chromedp.CSS(".user-email")))
		shoot(t, ctx, page.name)
	}
	secret := createKey(t, ctx)
	if loc := location(t, ctx); !strings.Contains(loc, "/settings/keys?created=") {
		t.Errorf("after creating a key the page is %s, want the list (post/redirect/get)", loc)
	}
	shoot(t, ctx, "keys-created")
	run(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#key-shown")))
	if n := count(t, ctx, "table.keys tbody tr"); n != 2 || strings.Contains(text(t, ctx, "main"), secret) {
		t.Errorf("after a reload: %d keys, secret shown again: %v", n, strings.Contains(text(t, ctx, "main"), secret))
	}
	run(t, ctx, "open the audit log", chromedp.Navigate(p.BaseURL+"/t/dev/settings/audit"), chromedp.WaitVisible(chromedp.CSS(".user-email")))
	shoot(t, ctx, "audit")
}
