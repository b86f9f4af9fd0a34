package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// openBig publishes a definition of n chained steps as key and opens it.
func openBig(t *testing.T, ctx context.Context, p *program, key string, n int) {
	t.Helper()
	createDefinition(t, ctx, p, key)
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(async () => {
		const r = await fetch(document.getElementById("editor").dataset.publishUrl, {method: "POST",
			headers: {"X-CSRF-Token": document.getElementById("editor").dataset.csrf, Accept: "application/json"},
			body: new URLSearchParams({document: `+"`"+strings.Replace(bigDefinition(n), "key: big", "key: "+key, 1)+"`"+`})});
		return r.status;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || status != 201 {
		t.Fatalf("publish %d steps = %d, %v", n, status, err)
	}
	run(t, ctx, "open it", chromedp.Navigate(p.BaseURL+"/t/dev/definitions/"+key+"/edit"),
		chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
}

// centredJS holds when a step's box is in the middle of the graph pane.
func centredJS(ref string) string {
	return fmt.Sprintf(`(() => {
		const s = document.getElementById("graph").getBoundingClientRect();
		const n = document.querySelector('g.node[data-ref=%q] rect').getBoundingClientRect();
		return Math.abs(n.x + n.width / 2 - (s.x + s.width / 2)) < 4 && Math.abs(n.y + n.height / 2 - (s.y + s.height / 2)) < 4;
	})()`, ref)
}

// searchFor types q into the emptied search box.
func searchFor(t *testing.T, ctx context.Context, q string) {
	t.Helper()
	run(t, ctx, "search "+q, chromedp.Evaluate[chromedp.Void](`(() => { const i = document.getElementById("step-search"); i.value = ""; i.focus(); })()`),
		chromedp.SendKeys(chromedp.CSS("#step-search"), q))
}

// The search box finds steps by ref, name or type as you type and marks
// them on the graph; Enter or a click selects one and centres it.
func TestEditorFindsAStep(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	openBig(t, ctx, p, "big", 60)

	run(t, ctx, "type step_4", chromedp.SendKeys(chromedp.CSS("#step-search"), "step_4"))
	waitFor(t, ctx, "11 matches marked", `document.querySelectorAll("g.node.match").length === 11 &&
		document.getElementById("step-search-count").textContent === "11 found" &&
		document.querySelectorAll("#step-search-results li").length === 11`)
	run(t, ctx, "narrow to step_42", chromedp.SendKeys(chromedp.CSS("#step-search"), "2"))
	waitFor(t, ctx, "one match", `document.querySelectorAll("g.node.match").length === 1 && !!document.querySelector('g.node.match[data-ref="step_42"]')`)
	pressEnter(t, ctx)
	waitFor(t, ctx, "step_42 selected", `document.querySelector('#panel [data-path="ref"]')?.value === "step_42" && !!document.querySelector('g.node.selected[data-ref="step_42"]')`)
	waitFor(t, ctx, "step_42 centred at full size", centredJS("step_42")+` && Number(document.getElementById("graph").dataset.scale) >= 1`)

	// By type: every step is a transform; a click picks one.
	searchFor(t, ctx, "transform")
	waitFor(t, ctx, "all 60 found", `document.getElementById("step-search-count").textContent === "60 found"`)
	run(t, ctx, "click step_7", chromedp.Click(chromedp.CSS(`#step-search-results li[data-ref="step_7"]`), chromedp.NodeVisible))
	waitFor(t, ctx, "step_7 selected and centred", `document.querySelector('#panel [data-path="ref"]')?.value === "step_7" && `+centredJS("step_7"))
	searchFor(t, ctx, "step_3")
	waitFor(t, ctx, "the list open", `!document.getElementById("step-search-results").hidden`)
	shoot(t, ctx, "editor-search")
	axeClean(t, ctx)
}

// The minimap shows the whole graph with the part in view as a
// rectangle; a click on it, or a drag, pans the view there. It is hidden
// on a narrow screen.
func TestEditorMinimapPans(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	openBig(t, ctx, p, "big", 60)
	waitFor(t, ctx, "the minimap of 60 steps", `document.querySelector("svg.minimap")?.dataset.nodes === "60"`)
	// At Fit the whole graph is in view: the minimap would only hide part
	// of it.
	waitFor(t, ctx, "no minimap at Fit", `getComputedStyle(document.querySelector("svg.minimap")).display === "none"`)
	run(t, ctx, "zoom in", chromedp.Click(chromedp.CSS("#zoom-in")), chromedp.Click(chromedp.CSS("#zoom-in")),
		chromedp.Click(chromedp.CSS("#zoom-in")), chromedp.Click(chromedp.CSS("#zoom-in")))
	waitFor(t, ctx, "the minimap zoomed in", `getComputedStyle(document.querySelector("svg.minimap")).display !== "none"`)

	mini := func(ref string) [2]float64 {
		pt, err := chromedp.Run(ctx, chromedp.Evaluate[[2]float64](fmt.Sprintf(`(() => {
			const r = document.querySelector('svg.minimap rect[data-ref=%q]').getBoundingClientRect();
			return [r.x + r.width / 2, r.y + r.height / 2];
		})()`, ref)))
		if err != nil {
			t.Fatalf("find %s on the minimap: %v", ref, err)
		}
		return pt
	}
	// The view's rectangle is the pane: as wide as the pane is, in the
	// minimap's scale.
	ratio := jsNum(ctx, t, `(() => {
		const v = document.querySelector("svg.minimap .mini-view").getBoundingClientRect();
		const g = document.getElementById("graph").getBoundingClientRect();
		return (v.width / v.height) / (g.width / g.height);
	})()`)
	if math.Abs(ratio-1) > 0.05 {
		t.Fatalf("the view's rectangle has the shape %.2f of the pane's", ratio)
	}

	a := mini("step_50")
	held := func(p *input.DispatchMouseEventParams) { p.Button, p.Buttons = input.MouseButtonLeft, 1 }
	run(t, ctx, "click step_50 on the minimap",
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, a[0], a[1], held, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, a[0], a[1], held, chromedp.ClickCount(1)))
	waitFor(t, ctx, "step_50 in the middle", `(() => {
		const s = document.getElementById("graph").getBoundingClientRect();
		const n = document.querySelector('g.node[data-ref="step_50"] rect').getBoundingClientRect();
		return n.x < s.x + s.width / 2 && n.right > s.x + s.width / 2 && n.y < s.y + s.height / 2 + 20 && n.bottom > s.y + s.height / 2 - 20;
	})()`)

	b := mini("step_5")
	run(t, ctx, "drag on the minimap to step_5",
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, a[0], a[1], held, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (a[0]+b[0])/2, (a[1]+b[1])/2, held),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, b[0], b[1], held),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, b[0], b[1], held, chromedp.ClickCount(1)))
	waitFor(t, ctx, "step_5 in the middle", `(() => {
		const s = document.getElementById("graph").getBoundingClientRect();
		const n = document.querySelector('g.node[data-ref="step_5"] rect').getBoundingClientRect();
		return n.x < s.x + s.width / 2 && n.right > s.x + s.width / 2 && n.y < s.y + s.height / 2 + 20 && n.bottom > s.y + s.height / 2 - 20;
	})()`)
	shoot(t, ctx, "editor-minimap")

	run(t, ctx, "790 px wide", chromedp.EmulateViewport(790, 900))
	waitFor(t, ctx, "no minimap", `getComputedStyle(document.querySelector("svg.minimap")).display === "none"`)
	run(t, ctx, "back", chromedp.EmulateViewport(1280, 900))
	axeClean(t, ctx)
}
