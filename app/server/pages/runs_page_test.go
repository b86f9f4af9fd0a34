package pages_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
)

var runRow = regexp.MustCompile(`<tr data-run="([0-9a-f-]{36})"`)

// The runs list filters by status, definition, subject, attributes and
// time, and pages newest first by cursor without losing or repeating a
// run.
func TestRunsPageFiltersAndPages(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, gateFlow)
	b.publish(t, "key: quick\nsteps:\n  - { ref: a, type: task, with: { handler: builtin.noop } }\n")
	for i := range 55 {
		b.start(t, runs.Trigger{Definition: "gated", Subject: fmt.Sprintf("order-%d", i),
			SearchAttributes: map[string]any{"tier": []string{"gold", "silver"}[i%2], "n": i}})
	}
	quick := b.start(t, runs.Trigger{Definition: "quick", Subject: "order-q"})
	b.waitStatus(t, quick, engine.RunSucceeded)

	first := b.get(b.viewer, "/runs")
	wantPage(t, "first page", first, http.StatusOK, `id="runs-next"`, `class="status succeeded"`, `href="`+b.base+`/runs/`+quick.String()+`"`)
	seen := rows(first.Body)
	if len(seen) != 50 || seen[0] != quick.String() {
		t.Fatalf("first page has %d runs starting %v, want 50 starting with the newest", len(seen), seen[:1])
	}
	next := regexp.MustCompile(`id="runs-next" href="([^"]+)"|href="([^"]+)" id="runs-next"`).FindStringSubmatch(first.Body)
	if next == nil {
		t.Fatal("no next link")
	}
	link := strings.ReplaceAll(next[1]+next[2], "&amp;", "&")
	second := b.br(b.viewer, link)
	wantPage(t, "second page", second, http.StatusOK, `id="runs-first"`)
	if strings.Contains(second.Body, `id="runs-next"`) {
		t.Error("the last page links a next one")
	}
	all := append(seen, rows(second.Body)...)
	if len(all) != 56 || len(unique(all)) != 56 {
		t.Fatalf("two pages hold %d runs (%d distinct), want 56", len(all), len(unique(all)))
	}

	for _, c := range []struct {
		query string
		want  int
	}{
		{"?definition=quick", 1},
		{"?status=succeeded", 1},
		{"?subject=order-7", 1},
		{"?attrs=tier%3Dgold", 28},
		{"?attrs=tier%3Dsilver+n%3D3", 1},
		{"?attr.tier=silver&definition=gated", 27},
		{"?status=waiting&definition=quick", 0},
		{"?to=2000-01-01T00%3A00", 0},
		{"?from=" + time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04"), 0},
		{"?from=2000-01-01T00%3A00&definition=quick", 1},
	} {
		page := b.get(b.viewer, "/runs"+c.query)
		if page.Status != http.StatusOK || len(rows(page.Body)) != c.want {
			t.Errorf("%s: %d with %d runs, want %d", c.query, page.Status, len(rows(page.Body)), c.want)
		}
	}
	wantPage(t, "bad time", b.get(b.viewer, "/runs?from=yesterday"), http.StatusBadRequest, `id="filter-error"`)
	wantPage(t, "bad cursor", b.get(b.viewer, "/runs?cursor=zzz"), http.StatusBadRequest, "malformed cursor")
}

func rows(body string) []string {
	var out []string
	for _, m := range runRow.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func unique(xs []string) map[string]bool {
	out := map[string]bool{}
	for _, x := range xs {
		out[x] = true
	}
	return out
}

// br opens an absolute dashboard path (a link from a page).
func (b *dashBundle) br(br *servertest.Browser, path string) servertest.Answer {
	return br.Get(b.srvURL + path)
}
