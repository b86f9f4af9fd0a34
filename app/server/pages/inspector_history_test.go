package pages_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
)

var (
	seqRe  = regexp.MustCompile(`<li data-seq="(\d+)">`)
	hrefRe = regexp.MustCompile(`href="([^"]*)" id="(history-[a-z]+)"`)
)

// historyPage is one page of the inspector's history: its seqs in the
// page's order and its pager's links by id.
func historyPage(t *testing.T, b *dashBundle, path string) ([]int64, map[string]string) {
	t.Helper()
	a := b.get(b.viewer, path)
	if a.Status != http.StatusOK {
		t.Fatalf("%s = %d: %.300s", path, a.Status, a.Body)
	}
	timeline := a.Body[strings.Index(a.Body, `id="timeline"`):]
	var seqs []int64
	for _, m := range seqRe.FindAllStringSubmatch(timeline, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		seqs = append(seqs, n)
	}
	links := map[string]string{}
	for _, m := range hrefRe.FindAllStringSubmatch(timeline, -1) {
		links[m[2]] = strings.TrimPrefix(html.UnescapeString(m[1]), b.base)
	}
	return seqs, links
}

// The history pages by keyset both ways, filtered by kind and step,
// oldest or newest first; the last page is one click from the first, and
// walking the pages forward or back sees every transition once.
func TestInspectorHistoryFiltersOrdersAndPages(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: wide
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, do: {type: transform, with: {expr: 'item'}}}
  - { ref: all, type: gather, with: { scatter_ref: fan } }
edges:
  - { from: fan, to: all }
`)
	items := make([]int, 120)
	for i := range items {
		items[i] = i
	}
	id := b.start(t, runs.Trigger{Definition: "wide", Input: map[string]any{"items": items}})
	r := b.waitStatus(t, id, engine.RunSucceeded)
	all, err := b.store.RunHistory(context.Background(), b.tenant.ID, id, 0, int(r.TransitionCount)+10)
	if err != nil || int64(len(all)) != r.TransitionCount || r.TransitionCount < 200 {
		t.Fatalf("history of %d transitions (count %d): %v", len(all), r.TransitionCount, err)
	}
	path := "/runs/" + id.String()

	first, links := historyPage(t, b, path)
	if len(first) != 50 || first[0] != 1 || links["history-next"] == "" || links["history-last"] == "" || links["history-prev"] != "" || links["history-first"] != "" {
		t.Fatalf("first page: %d entries from %v, links %v", len(first), first[:1], links)
	}
	last, lastLinks := historyPage(t, b, links["history-last"])
	if len(last) != 50 || last[len(last)-1] != r.TransitionCount || lastLinks["history-next"] != "" || lastLinks["history-last"] != "" || lastLinks["history-prev"] == "" || lastLinks["history-first"] == "" {
		t.Fatalf("last page: %d entries ending %v, links %v", len(last), last[len(last)-1], lastLinks)
	}
	if !strings.Contains(links["history-last"], "history=end") {
		t.Errorf("the last page's link is %s, want history=end", links["history-last"])
	}

	// Every kind filter sees exactly the transitions of its kind, walked
	// forward from the first page and back from the last, either order.
	want := func(kind string, t engine.Transition) bool {
		switch kind {
		case "succeeded":
			return t.Node != "" && t.To == "succeeded" && t.From != "succeeded"
		case "run":
			return t.Node == ""
		}
		return true
	}
	for _, c := range []struct{ kind, step, order string }{
		{"", "", ""}, {"", "", "newest"}, {"succeeded", "", ""}, {"succeeded", "", "newest"}, {"run", "", ""}, {"", "all", "newest"},
	} {
		var exp []int64
		for _, tr := range all {
			if want(c.kind, tr) && (c.step == "" || tr.Node == c.step) {
				exp = append(exp, tr.Seq)
			}
		}
		if c.order == "newest" {
			for i, j := 0, len(exp)-1; i < j; i, j = i+1, j-1 {
				exp[i], exp[j] = exp[j], exp[i]
			}
		}
		q := path + "?history_kind=" + c.kind + "&history_step=" + c.step + "&history_order=" + c.order
		var fwd []int64
		next := q
		for pages := 0; next != ""; pages++ {
			if pages > 20 {
				t.Fatalf("%v: more than 20 pages", c)
			}
			seqs, l := historyPage(t, b, next)
			fwd = append(fwd, seqs...)
			next = l["history-next"]
			if next != "" && ((c.kind != "" && !strings.Contains(next, "history_kind="+c.kind)) || (c.order != "" && !strings.Contains(next, "history_order="+c.order))) {
				t.Fatalf("%v: the next page's link %s drops the filter", c, next)
			}
		}
		var back [][]int64
		_, l := historyPage(t, b, q)
		prev := l["history-last"]
		if len(exp) <= 50 {
			prev = ""
			back = append(back, exp)
		}
		for pages := 0; prev != ""; pages++ {
			if pages > 20 {
				t.Fatalf("%v: more than 20 pages back", c)
			}
			seqs, l := historyPage(t, b, prev)
			back = append([][]int64{seqs}, back...)
			prev = l["history-prev"]
		}
		var bwd []int64
		for _, p := range back {
			bwd = append(bwd, p...)
		}
		if !equalSeqs(fwd, exp) || !equalSeqs(bwd, exp) {
			t.Errorf("%v: forward %d and back %d entries, want %d (%v… and %v…, want %v…)", c, len(fwd), len(bwd), len(exp), head(fwd), head(bwd), head(exp))
		}
	}

	newest, _ := historyPage(t, b, path+"?history_order=newest")
	if newest[0] != r.TransitionCount {
		t.Errorf("newest first starts at %d, want %d", newest[0], r.TransitionCount)
	}
	page := b.get(b.viewer, path+"?history_kind=succeeded&history_order=newest")
	wantPage(t, "filtered history", page, http.StatusOK, `<option value="succeeded" selected>`, `<option value="newest" selected>`)
	wantPage(t, "unknown kind", b.get(b.viewer, path+"?history_kind=nope"), http.StatusBadRequest)
	wantPage(t, "unknown order", b.get(b.viewer, path+"?history_order=sideways"), http.StatusBadRequest)
	wantPage(t, "bad cursor", b.get(b.viewer, path+"?history_before=x"), http.StatusBadRequest)
}

func equalSeqs(a, b []int64) bool { return slices.Equal(a, b) }

func head(s []int64) []int64 { return s[:min(len(s), 5)] }
