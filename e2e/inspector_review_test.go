package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeClean fails the test on a serious or critical violation of the
// page as it stands.
func axeClean(t *testing.T, ctx context.Context, what string) {
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
	axeClean(t, ctx, "the filtered history")

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
