package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
)

// failedItems are the five items of 2,000 whose requests fail.
var failedItems = []int{101, 502, 903, 1404, 1905}

// outOfStock answers 200 to every item but failedItems, which answer 503
// with a JSON body naming the item until healed is set.
func outOfStock(t *testing.T, healed *atomic.Bool) *httptest.Server {
	t.Helper()
	bad := map[string]bool{}
	for _, i := range failedItems {
		bad[strconv.Itoa(i)] = true
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		item := strings.TrimPrefix(r.URL.Path, "/item/")
		w.Header().Set("Content-Type", "application/json")
		if bad[item] && !healed.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, `{"error": "warehouse offline", "sku": "sku-%s"}`, item)
			return
		}
		_, _ = fmt.Fprintf(w, `{"item": %q}`, item)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// On a finished 2,000-child run with 5 failed children, from the run
// page: the failure is one click away (Where it failed), and the
// history's last page; each failed child's error and the body its
// server answered are two clicks away (the run's error links to the
// failed children, each links to its panel, which shows its attempts'
// errors, the last failed attempt's response body open, and its retries'
// delays rounded);
// the five are retried at once with "Retry 5 failed children", and the
// run then succeeds.
func TestFiveFailedChildrenOf2000InTwoClicksInChromium(t *testing.T) {
	t.Parallel()
	var healed atomic.Bool
	srv := outOfStock(t, &healed)
	p := startDevAllowing(t)
	items := make([]string, 2000)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	id := publishRun(t, p, "restock", fmt.Sprintf(`
key: restock
limits: {max_inline_children: 2000}
steps:
  - ref: fetch
    type: scatter
    with:
      items_expr: input.items
      max_inline_children: 2000
      do: {type: http, retry: {max_attempts: 2, initial_interval: 300ms}, with: {url_expr: '"%s/item/" + item'}}
  - { ref: all, type: gather, with: { scatter_ref: fetch, strategy: raise } }
edges:
  - { from: fetch, to: all }
`, srv.URL), map[string]any{"items": items})
	r := waitAPI(t, p, "/runs/"+id, "the run to fail", func(r map[string]any) bool { return r["status"] == "failed" })
	total := int(r["transition_count"].(float64))

	ctx := newBrowser(t)
	dialogs := acceptDialogs(ctx)
	devLogin(t, ctx, p)
	runPage := p.BaseURL + "/t/dev/runs/" + id
	open := func() {
		t.Helper()
		run(t, ctx, "open the run", chromedp.Navigate(runPage), chromedp.WaitVisible(chromedp.CSS("#run-error")))
	}

	// The failure: one click.
	open()
	if got := text(t, ctx, "#run-error"); !strings.Contains(got, "gather_raised") || !strings.Contains(got, "5 children failed") {
		t.Errorf("the run's error says %q", got)
	}
	if got := text(t, ctx, "a.run-failed-children"); got != "5 failed children of fetch" {
		t.Errorf("the run's error links %q", got)
	}
	shoot(t, ctx, "review-2000-run")
	inspectorAxeClean(t, ctx, "the failed run")
	run(t, ctx, "click 1: where it failed", chromedp.Click(chromedp.CSS("#history-failure")),
		chromedp.WaitVisible(chromedp.CSS(`#timeline .status.failed`)))
	if tl := text(t, ctx, "#timeline"); !regexp.MustCompile(`fetch\[(101|502|903|1404|1905)\]`).MatchString(tl) {
		t.Errorf("the failure's page of the history shows no failed child")
	}

	// The history's last page: one click.
	open()
	run(t, ctx, "click 1: the last page", chromedp.Click(chromedp.CSS("#history-last")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#timeline li[data-seq="%d"]`, total))))
	shoot(t, ctx, "review-2000-history-last")

	// Each failed child's error and body: two clicks.
	for n, item := range failedItems {
		open()
		run(t, ctx, "click 1: the failed children", chromedp.Click(chromedp.CSS("a.run-failed-children")),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#children-list tr[data-index="%d"]`, item))))
		if n == 0 {
			if rows := count(t, ctx, "#children-list tbody tr"); rows != 5 {
				t.Errorf("the failed children's list has %d rows, want 5", rows)
			}
			for _, i := range failedItems {
				if got := text(t, ctx, fmt.Sprintf(`#children-list tr[data-index="%d"] .result`, i)); !strings.Contains(got, "503") {
					t.Errorf("child %d's row says %q", i, got)
				}
			}
			shoot(t, ctx, "review-2000-failed-children")
		}
		// The list may be refreshed between finding the link and the
		// click, so the click finds and clicks in one step.
		run(t, ctx, "click 2: the child", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector('#children-list tr[data-index="%d"] a.child-link').click()`, item)),
			chromedp.WaitVisible(chromedp.CSS("#node-error")))
		if loc := location(t, ctx); !strings.Contains(loc, fmt.Sprintf("node=fetch%%5B%d%%5D", item)) {
			t.Fatalf("the child opened at %s", loc)
		}
		if got := text(t, ctx, "#node-error"); !strings.Contains(got, "503") {
			t.Errorf("child %d's error says %q", item, got)
		}
		// The body its server answered is on the panel, read without a
		// third click: the last failed attempt's response opens with it.
		body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#attempts .attempt-response pre")].map((p) => p.textContent).join("\n")`))
		if err != nil || !strings.Contains(body, fmt.Sprintf(`"sku": "sku-%d"`, item)) || !strings.Contains(body, "warehouse offline") {
			t.Errorf("child %d's response body is not on its panel (%v): %q", item, err, body)
		}
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			const open = [...document.querySelectorAll("#attempts .attempt-response")].filter((d) => d.open);
			const last = [...document.querySelectorAll("#attempts .attempt-response")].pop();
			const pre = last && last.querySelector("pre");
			if (open.length !== 1 || open[0] !== last || !pre || !pre.checkVisibility()) return "";
			const r = pre.getBoundingClientRect();
			return r.width > 0 && r.height > 0 ? pre.textContent : "";
		})()`))
		if err != nil || !strings.Contains(shown, fmt.Sprintf(`"sku": "sku-%d"`, item)) || !strings.Contains(shown, "warehouse offline") {
			t.Errorf("child %d's last failed attempt's body is not shown open after two clicks (%v): %q", item, err, shown)
		}
		if rows := count(t, ctx, "#attempts tbody tr"); rows != 2 {
			t.Errorf("child %d shows %d attempts, want 2", item, rows)
		}
		if n := count(t, ctx, "#attempts .attempt-response"); n != 2 {
			t.Errorf("child %d's attempts show %d responses, want 2", item, n)
		}
		// The retry's delay reads in milliseconds, not nanoseconds.
		hist := text(t, ctx, "#node-history")
		if m := regexp.MustCompile(`retry in ([\d.]+)([a-zµ]+)`).FindStringSubmatch(hist); m == nil || m[2] != "ms" || strings.Contains(m[1], ".") {
			t.Errorf("child %d's history says of its retry %q, want whole milliseconds", item, m)
		}
		if n == 0 {
			shoot(t, ctx, "review-2000-failed-child")
			inspectorAxeClean(t, ctx, "the failed child")
		}
	}

	// The five retried at once.
	healed.Store(true)
	run(t, ctx, "open the failed children", chromedp.Navigate(runPage+"?node=fetch&state=failed#node"),
		chromedp.WaitVisible(chromedp.CSS("#retry-failed-children")))
	if got := text(t, ctx, "#retry-failed-children"); got != "Retry 5 failed children" {
		t.Errorf("the retry button says %q", got)
	}
	before := dialogs.Load()
	run(t, ctx, "retry the five", chromedp.Click(chromedp.CSS("#retry-failed-children")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	if got := dialogs.Load() - before; got != 1 {
		t.Errorf("%d questions before retrying the five, want 1", got)
	}
	waitAPI(t, p, "/runs/"+id, "the run to succeed", func(r map[string]any) bool { return r["status"] == "succeeded" })
	waitFor(t, ctx, "the page to show it", `document.getElementById("run-status").textContent === "succeeded"`)
	shoot(t, ctx, "review-2000-retried")
}
