package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// inspectorAxeClean fails the test on a serious or critical violation of the
// page as it stands.
func inspectorAxeClean(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	for _, v := range axeCheck(t, ctx) {
		t.Errorf("%s: %s (%s) %s at %s", what, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; "))
	}
}

// On a finished 2,000-child run the end of the history is one click from
// its start; the kind filter and the newest-first order page it by seq,
// and the address keeps them, so the page can be shared.
func TestInspectorHistoryEndFilterAndOrderInChromium(t *testing.T) {
	t.Parallel()
	p := startDevAllowing(t)
	items := make([]string, 2000)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	id := publishRun(t, p, "wide", `
key: wide
limits: {max_inline_children: 2000}
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, max_inline_children: 2000, do: {type: transform, with: {expr: 'item'}}}
  - { ref: all, type: gather, with: { scatter_ref: fan } }
edges:
  - { from: fan, to: all }
`, map[string]any{"items": items})
	r := waitAPI(t, p, "/runs/"+id, "the run to succeed", func(r map[string]any) bool { return r["status"] == "succeeded" })
	total := int(r["transition_count"].(float64))

	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the run", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id), chromedp.WaitVisible(chromedp.CSS("#history-last")))
	run(t, ctx, "go to the last page", chromedp.Click(chromedp.CSS("#history-last")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#timeline li[data-seq="%d"]`, total))))
	if count(t, ctx, "#history-next") != 0 || count(t, ctx, "#history-prev") != 1 || count(t, ctx, "#history-first") != 1 {
		t.Errorf("the last page offers next %d, previous %d, first %d", count(t, ctx, "#history-next"), count(t, ctx, "#history-prev"), count(t, ctx, "#history-first"))
	}
	if loc := location(t, ctx); !strings.Contains(loc, "history=end") {
		t.Errorf("the last page is at %s, want history=end", loc)
	}
	shoot(t, ctx, "inspector-history-last")

	run(t, ctx, "the run's own transitions, newest first", chromedp.SetValue(chromedp.CSS("#history-kind"), "run"),
		chromedp.SetValue(chromedp.CSS("#history-order"), "newest"), chromedp.Click(chromedp.CSS("#history-filter-go")),
		chromedp.WaitReady(chromedp.CSS(`#history-kind option[value="run"][selected]`)))
	loc := location(t, ctx)
	if !strings.Contains(loc, "history_kind=run") || !strings.Contains(loc, "history_order=newest") || strings.Contains(loc, "history=end") {
		t.Errorf("the filtered page is at %s", loc)
	}
	rows := count(t, ctx, "#timeline li")
	if rows < 2 || rows > 5 || !strings.Contains(text(t, ctx, "#timeline li:first-child"), "succeeded") {
		t.Errorf("the run's transitions newest first: %d rows, first %q", rows, text(t, ctx, "#timeline li:first-child"))
	}
	if n := count(t, ctx, `#timeline li .mono:empty`); n != rows {
		t.Errorf("%d of %d rows name a step, want every row the run's", rows-n, rows)
	}
	shoot(t, ctx, "inspector-history-filtered")
	inspectorAxeClean(t, ctx, "the filtered history")

	// Newest first pages back through the children's successes by seq.
	run(t, ctx, "children succeeded, newest first", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?history_kind=succeeded&history_order=newest#history"),
		chromedp.WaitVisible(chromedp.CSS("#history-next")))
	top := attrOf(t, ctx, "#timeline li:first-child", "data-seq")
	run(t, ctx, "the next page", chromedp.Click(chromedp.CSS("#history-next")), chromedp.WaitVisible(chromedp.CSS("#history-prev")))
	below := attrOf(t, ctx, "#timeline li:first-child", "data-seq")
	a, _ := strconv.Atoi(top)
	b, _ := strconv.Atoi(below)
	if b >= a || count(t, ctx, "#timeline li") != 50 {
		t.Errorf("the second page newest first starts at %d after %d, with %d rows", b, a, count(t, ctx, "#timeline li"))
	}
}

// graphProblems measures the drawn graph: labels whose boxes overlap,
// and edges that run under a box other than their ends (a box drawn
// over an edge cuts it) or out of the drawing.
const graphProblems = `(() => {
	const svg = document.getElementById("run-graph"), vb = svg.viewBox.baseVal, out = [];
	const labels = [...svg.querySelectorAll("text.glabel")].map((t) => [t.textContent, t.getBBox()]);
	for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
		const [an, a] = labels[i], [bn, b] = labels[j];
		if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) out.push("labels " + an + " and " + bn + " overlap");
	}
	const boxes = [...svg.querySelectorAll("g.gnode")].map((g) => {
		const m = /translate\((\d+),(\d+)\)/.exec(g.getAttribute("transform"));
		return [g.dataset.ref, +m[1], +m[2]];
	});
	for (const e of svg.querySelectorAll("g.gedge")) {
		const p = e.querySelector("path.gline"), len = p.getTotalLength();
		for (let s = 0; s <= len; s += 2) {
			const pt = p.getPointAtLength(s);
			if (pt.x < 0 || pt.y < 0 || pt.x > vb.width || pt.y > vb.height) { out.push(e.dataset.from + "→" + e.dataset.to + " leaves the drawing"); break; }
			const hit = boxes.find(([ref, x, y]) => ref !== e.dataset.from && ref !== e.dataset.to && pt.x > x && pt.x < x + 168 && pt.y > y && pt.y < y + 46);
			if (hit) { out.push(e.dataset.from + "→" + e.dataset.to + " runs under " + hit[0]); break; }
		}
	}
	return out.join("; ");
})()`

// A choice of four branches beside another, with edges that skip a
// layer: in both layouts no two labels overlap and no edge is cut by a
// box it passes.
func TestInspectorGraphChoiceLabelsAndEdgesInChromium(t *testing.T) {
	t.Parallel()
	p := startDevAllowing(t)
	id := publishRun(t, p, "pick4", `
key: pick4
steps:
  - { ref: start, type: transform, with: { expr: '1' } }
  - { ref: route, type: transform, with: { expr: 'input.kind' } }
  - { ref: route2, type: transform, with: { expr: '3' } }
  - { ref: a, type: transform, with: { expr: '1' } }
  - { ref: b, type: transform, with: { expr: '2' } }
  - { ref: c, type: transform, with: { expr: '3' } }
  - { ref: d, type: transform, with: { expr: '4' } }
  - { ref: e, type: transform, with: { expr: '5' } }
  - { ref: end, type: transform, with: { expr: '6' }, join: any }
edges:
  - { from: start, to: route }
  - { from: start, to: route2 }
  - { from: start, to: end, on: error }
  - from: route
    choice:
      - { when: 'steps.route.output == "small-and-rather-long"', to: a }
      - { when: 'steps.route.output == "large"', to: b }
      - { when: 'steps.route.output == "medium"', to: c }
      - { default: true, to: d }
  - from: route2
    choice:
      - { when: 'steps.route2.output > 10', to: e }
      - { when: 'steps.route2.output < 0', to: d }
      - { when: 'steps.route2.output == 3', to: a }
      - { default: true, to: b }
  - { from: route, to: end, on: error }
  - { from: route2, to: c, on: error }
  - { from: a, to: end }
  - { from: e, to: end }
`, map[string]any{"kind": "large"})
	waitAPI(t, p, "/runs/"+id, "the run to end", func(r map[string]any) bool { return r["status"] != "running" && r["status"] != "pending" })
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	for _, layout := range []string{"lr", "tb"} {
		run(t, ctx, "open the run "+layout, chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?layout="+layout),
			chromedp.WaitVisible(chromedp.CSS(`#run-graph[data-layout="`+layout+`"] text.glabel`)))
		if n := count(t, ctx, "#run-graph text.glabel"); n != 11 {
			t.Errorf("%s: %d labels, want 11", layout, n)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](graphProblems))
		if err != nil || got != "" {
			t.Errorf("%s: %s (%v)", layout, got, err)
		}
		shoot(t, ctx, "inspector-graph-choice-"+layout)
		inspectorAxeClean(t, ctx, "the graph laid out "+layout)
	}
}

// A step its concurrency pool holds back links from its panel to the
// run holding the pool's slot, one click away.
func TestInspectorHeldStepLinksToTheSlotHolderInChromium(t *testing.T) {
	t.Parallel()
	p := startDevAllowing(t)
	doc := `
key: vendor
steps:
  - {ref: call, type: task, concurrency: {key_expr: '"vendor"', limit: 1}, with: {handler: builtin.sleep, input_expr: '{"ms": 60000}'}}
`
	first := publishRun(t, p, "vendor", doc, map[string]any{})
	waitAPI(t, p, "/runs/"+first, "the first run to run", func(r map[string]any) bool { return r["status"] == "running" })
	code, out := api(t, p, "POST", "/runs", "application/json", `{"definition": "vendor"}`)
	if code != 201 {
		t.Fatalf("start the second run: %d %v", code, out)
	}
	second := out["id"].(string)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the held step", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+second+"?node=call"),
		chromedp.WaitVisible(chromedp.CSS("#node-slot-holders a.slot-holder")))
	if got := text(t, ctx, "#node-state"); got != "held" {
		t.Errorf("the held step's state says %q", got)
	}
	if got := text(t, ctx, "#node-slot-holders"); !strings.Contains(got, first[:8]+" · call") {
		t.Errorf("the holders say %q, want the first run's call", got)
	}
	shoot(t, ctx, "inspector-held-holders")
	inspectorAxeClean(t, ctx, "the held step")
	run(t, ctx, "open the holder", chromedp.Click(chromedp.CSS("#node-slot-holders a.slot-holder")),
		chromedp.WaitVisible(chromedp.CSS(`#node[data-ref="call"]`)))
	if loc := location(t, ctx); !strings.Contains(loc, "/runs/"+first+"?node=call") {
		t.Errorf("the holder's link led to %s", loc)
	}
	for _, id := range []string{first, second} {
		api(t, p, "POST", "/runs/"+id+"/cancel", "application/json", `{"reason": "done"}`)
	}
}

// A step's panel shows the input its attempt received, evaluated, beside
// its settings as written.
func TestInspectorShowsTheAttemptsInputInChromium(t *testing.T) {
	t.Parallel()
	p := startDevAllowing(t)
	id := publishRun(t, p, "doubled", `
key: doubled
steps:
  - { ref: a, type: task, with: { handler: builtin.echo, input_expr: '{"order": input.order * 2, "who": input.who}' } }
`, map[string]any{"order": 21, "who": "ada"})
	waitAPI(t, p, "/runs/"+id, "the run to succeed", func(r map[string]any) bool { return r["status"] == "succeeded" })
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the step", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id+"?node=a"), chromedp.WaitVisible(chromedp.CSS("#node-attempt-input")))
	got := text(t, ctx, "#node-attempt-input")
	if !strings.Contains(got, `"order": 42`) || !strings.Contains(got, `"who": "ada"`) || strings.Contains(got, "input_expr") {
		t.Errorf("the attempt's input says %s", got)
	}
	if got := text(t, ctx, "#node-attempt-input-details summary"); !strings.Contains(got, "as attempt 1 received it") {
		t.Errorf("the input is labelled %q", got)
	}
	run(t, ctx, "open the settings", chromedp.Click(chromedp.CSS("#node-settings-details summary")))
	if got := text(t, ctx, "#node-settings-details"); !strings.Contains(got, "input_expr") || !strings.Contains(got, "Settings") {
		t.Errorf("the settings say %s", got)
	}
	shoot(t, ctx, "inspector-attempt-input")
	inspectorAxeClean(t, ctx, "the step's input and settings")
}
