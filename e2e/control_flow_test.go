package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// answerDialogs answers every JavaScript confirm of the tab with what
// accept says at that moment, and counts the dialogs.
func answerDialogs(ctx context.Context, accept *atomic.Bool) *atomic.Int32 {
	var seen atomic.Int32
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			seen.Add(1)
			if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept.Load()}); err != nil {
				return
			}
		}
	}()
	return &seen
}

// TestCancelNodeInChromium: the inspector's Cancel button asks first;
// declined, nothing happens; accepted, the node is cancelled, the run goes
// down its error edge and the panel says why.
func TestCancelNodeInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	id := publishRun(t, p, "parked", `
key: parked
steps:
  - { ref: hold, type: signal, with: { name: never }, on_error: continue }
  - { ref: after, type: transform, with: { expr: 'steps.hold.error.code' } }
edges:
  - { from: hold, to: after, on: error }
`, map[string]any{})
	ctx := newBrowser(t)
	var accept atomic.Bool
	dialogs := answerDialogs(ctx, &accept)
	devLogin(t, ctx, p)
	run(t, ctx, "open the waiting step", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?node=hold"),
		chromedp.WaitVisible(chromedp.CSS("#cancel-node")))
	run(t, ctx, "decline", chromedp.Click(chromedp.CSS("#cancel-node")))
	waitFor(t, ctx, "the question", `true`)
	if dialogs.Load() != 1 {
		t.Fatalf("%d dialogs after the click, want 1", dialogs.Load())
	}
	if _, out := api(t, p, "GET", "/runs/"+id, "", ""); out["status"] != "waiting" {
		t.Fatalf("declined, the run is %v", out["status"])
	}
	accept.Store(true)
	run(t, ctx, "accept", chromedp.SendKeys(chromedp.CSS("#cancel-node-reason"), "from the browser"),
		chromedp.Click(chromedp.CSS("#cancel-node")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	waitAPIStatus(t, p, id, "succeeded")
	run(t, ctx, "reload", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?node=hold"),
		chromedp.WaitVisible(chromedp.CSS("#node-cancel-reason")))
	if got := text(t, ctx, "#node-cancel-reason"); got != "cancelled by an operator: from the browser" {
		t.Errorf("the panel says %q", got)
	}
	if code, out := api(t, p, "GET", "/runs/"+id, "", ""); code != http.StatusOK || !strings.Contains(out["output"].(map[string]any)["after"].(string), "cancelled") {
		t.Errorf("run output %v", out["output"])
	}
}

// TestEditorShowsControlFlowInChromium: a partial join, a loop and an
// end_run show on their steps; the join is edited in the side panel.
func TestEditorShowsControlFlowInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "flows")
	doc := `key: flows
steps:
- {ref: a, type: signal, with: {name: a}}
- {ref: b, type: signal, with: {name: b}}
- {ref: c, type: signal, with: {name: c}}
- {ref: j, type: transform, with: {expr: '1'}, join: {at_least: 2, cancel_rest: true}}
- {ref: again, type: subworkflow, with: {workflow: flows, repeat: {until_expr: 'iteration >= 3', max_iterations: 3}}}
- {ref: stop, type: transform, with: {expr: '2'}, end_run: succeeded}
edges:
- {from: a, to: j}
- {from: b, to: j}
- {from: c, to: j}
- {from: j, to: again}
- {from: again, to: stop}
`
	run(t, ctx, "paste the YAML", chromedp.Evaluate[chromedp.Void](`(() => {
		const y = document.getElementById("yaml");
		y.value = `+jsString(doc)+`;
		y.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	waitFor(t, ctx, "the tags", `(() => {
		const tag = (ref) => (document.querySelector('g.node[data-ref="' + ref + '"] text.tags') || {}).textContent;
		return tag("j") === "≥2 ✂" && tag("again") === "↻ ≤3" && tag("stop") === "■ succeeded" && !!document.querySelector('g.node.loop[data-ref="again"]');
	})()`)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	run(t, ctx, "select j", chromedp.Evaluate[chromedp.Void](`document.querySelector('g.node[data-ref="j"] rect').dispatchEvent(new MouseEvent("click", {bubbles: true}))`))
	waitFor(t, ctx, "the panel of j", `!!document.querySelector('#panel [data-join="mode"]')`)
	run(t, ctx, "open the step settings", chromedp.Evaluate[chromedp.Void](`document.querySelector("#panel .step-settings").open = true`))
	waitFor(t, ctx, "the join in the panel", `document.querySelector('#panel [data-join="mode"]').value === "at_least" &&
		document.querySelector('#panel [data-join="n"]').value === "2" && document.querySelector('#panel [data-join="rest"]').checked`)
	typeInto(t, ctx, `#panel [data-join="n"]`, "3")
	waitFor(t, ctx, "the YAML to follow the panel", `document.getElementById("yaml").value.includes("at_least: 3")`)
	waitFor(t, ctx, "the tag to follow", `document.querySelector('g.node[data-ref="j"] text.tags').textContent === "≥3 ✂"`)
	run(t, ctx, "make it any", chromedp.Evaluate[chromedp.Void](`(() => {
		const m = document.querySelector('#panel [data-join="mode"]');
		m.value = "any"; m.dispatchEvent(new Event("change", {bubbles: true}));
	})()`))
	waitFor(t, ctx, "join any", `/join: any/.test(document.getElementById("yaml").value) && document.querySelector('#panel [data-join="n"]').hidden`)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "`", "\\`", "$", `\$`)
	return "`" + r.Replace(s) + "`"
}
