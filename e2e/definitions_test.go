package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// nightlyV1 declares a schedule and an event trigger; nightlyV2 changes
// one line of it to a long one, for the diff.
const (
	nightlyV1 = "key: nightly\nsteps:\n  - {ref: build, type: transform, with: {expr: '\"built\"'}}\n" +
		"triggers:\n  - schedule: {id: nightly-report, cron: '30 2 * * *'}\n  - {event: stock.low}\n"
	nightlyLong = "  - {ref: build, type: transform, with: {expr: '\"built for every warehouse of the northern region, with the stock counts of each aisle and the orders still open at the close of the day\"'}}\n"
)

var nightlyV2 = strings.Replace(nightlyV1, "  - {ref: build, type: transform, with: {expr: '\"built\"'}}\n", nightlyLong, 1)

// The definitions and triggers pages in Chromium: a definition's page
// lists its schedules and links each, and the schedule's page links
// back; the definitions list shows each one's last run, linking to it;
// the diff's halves use the width and its summary counts in good
// English; the counts of runs a trigger started link to those runs; a
// version is unpublished after a question. Each page is shot at 1440 and
// 800 px in both themes and has no serious or critical axe finding.
func TestDefinitionPagesInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	for _, doc := range []string{nightlyV1, nightlyV2, "key: idle\nsteps:\n  - {ref: a, type: transform, with: {expr: '1'}}\n"} {
		key := strings.TrimPrefix(strings.SplitN(doc, "\n", 2)[0], "key: ")
		if code, out := api(t, p, "POST", "/definitions/"+key+"/versions", "application/yaml", doc); code != http.StatusCreated {
			t.Fatalf("publish %s: %d %v", key, code, out)
		}
	}
	if code, out := api(t, p, "POST", "/schedules", "application/json", `{"id": "nightly-extra", "definition": "nightly", "spec": {"interval": "2h"}, "paused": true, "note": "not yet"}`); code != http.StatusCreated {
		t.Fatalf("create a schedule: %d %v", code, out)
	}
	if code, out := api(t, p, "POST", "/events", "application/json", `{"name": "stock.low", "data": {"sku": "b-17"}}`); code/100 != 2 {
		t.Fatalf("publish an event: %d %v", code, out)
	}
	code, out := api(t, p, "POST", "/schedules/nightly-report/trigger", "application/json", `{}`)
	if code/100 != 2 {
		t.Fatalf("trigger the schedule: %d %v", code, out)
	}
	ctx := newBrowser(t)
	var accept atomic.Bool
	accept.Store(true)
	dialogs := answerDialogs(ctx, &accept)
	devLogin(t, ctx, p)
	edit := p.BaseURL + "/t/dev/definitions/nightly/edit"

	t.Run("schedules", func(t *testing.T) {
		run(t, ctx, "open the definition", chromedp.Navigate(edit),
			chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#definition-schedules`)))
		report := text(t, ctx, `#definition-schedules tr[data-schedule="nightly-report"]`)
		if !regexp.MustCompile(`30 2 \* \* \*.*\d{4}-\d\d-\d\d 02:30 UTC.*active.*in the document`).MatchString(report) {
			t.Errorf("the declared schedule's row = %q", report)
		}
		extra := text(t, ctx, `#definition-schedules tr[data-schedule="nightly-extra"]`)
		if !strings.Contains(extra, "every 2h") || !strings.Contains(extra, "none while paused") || !strings.Contains(extra, "paused") {
			t.Errorf("the paused schedule's row = %q", extra)
		}
		shoot(t, ctx, "definition-schedules")
		axeBothThemes(t, ctx, "the definition page")
		run(t, ctx, "open the declared schedule", chromedp.Click(chromedp.CSS(`#definition-schedules tr[data-schedule="nightly-report"] td:first-child a`)),
			chromedp.WaitVisible(chromedp.CSS(`#schedule-definition`)))
		shoot(t, ctx, "definition-schedule-page")
		axeBothThemes(t, ctx, "the schedule page")
		run(t, ctx, "back to the definition by the schedule's link", chromedp.Click(chromedp.CSS(`#schedule-definition`)),
			chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
		if got := text(t, ctx, "#definition-key"); got != "nightly" {
			t.Errorf("the schedule's definition link opened %q", got)
		}
	})

	t.Run("last run", func(t *testing.T) {
		run(t, ctx, "open the definitions", chromedp.Navigate(p.BaseURL+"/t/dev/definitions"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-definition="nightly"] .last-run a.status`)))
		if got := text(t, ctx, `tr[data-definition="idle"] .last-run`); got != "never run" {
			t.Errorf("idle's last run = %q", got)
		}
		cell := text(t, ctx, `tr[data-definition="nightly"] .last-run`)
		if !regexp.MustCompile(`^(pending|running|waiting|succeeded) \d{4}-\d\d-\d\d \d\d:\d\d UTC$`).MatchString(cell) {
			t.Errorf("nightly's last run = %q", cell)
		}
		shoot(t, ctx, "definitions-last-run")
		axeBothThemes(t, ctx, "the definitions list")
		href := attrOf(t, ctx, `tr[data-definition="nightly"] .last-run a.status`, "href")
		run(t, ctx, "open the last run", chromedp.Click(chromedp.CSS(`tr[data-definition="nightly"] .last-run a.status`)),
			chromedp.WaitVisible(chromedp.CSS("#run-id")))
		if id := text(t, ctx, "#run-id"); !strings.HasSuffix(href, "/runs/"+id) {
			t.Errorf("the last run's link %s opened run %s", href, id)
		}
	})

	t.Run("diff", func(t *testing.T) {
		run(t, ctx, "open the diff", chromedp.Navigate(p.BaseURL+"/t/dev/definitions/nightly/diff?from=1&to=2"),
			chromedp.WaitVisible(chromedp.CSS("#diff")))
		if got := text(t, ctx, "#diff-summary"); got != "1 changed line" {
			t.Errorf("the summary says %q", got)
		}
		for _, w := range []int64{1440, 800} {
			run(t, ctx, fmt.Sprintf("%d px wide", w), chromedp.EmulateViewport(w, 900))
			settle(t, ctx)
			// Each code half takes most of its side; the numbers are narrow;
			// the long line wraps inside its half instead of widening the page.
			table := jsNum(ctx, t, `document.getElementById("diff").getBoundingClientRect().width`)
			code := jsNum(ctx, t, `document.querySelector("#diff tr.diff-change td.right").getBoundingClientRect().width`)
			num := jsNum(ctx, t, `document.querySelector("#diff tr.diff-change td.ln").getBoundingClientRect().width`)
			if code < 0.44*table || num > 56 {
				t.Errorf("at %d px: a code half is %.0f px of %.0f, a number column %.0f px", w, code, table, num)
			}
			if over := jsNum(ctx, t, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
				t.Errorf("at %d px the page scrolls sideways by %.0f px", w, over)
			}
			if lines := jsNum(ctx, t, `(() => { const c = document.querySelector("#diff tr.diff-change td.right"); return c.getBoundingClientRect().height / parseFloat(getComputedStyle(c).lineHeight); })()`); lines < 1.5 {
				t.Errorf("at %d px the long line does not wrap (%.1f lines)", w, lines)
			}
		}
		run(t, ctx, "back to the default size", chromedp.EmulateViewport(1280, 900))
		shoot(t, ctx, "definition-diff")
		axeBothThemes(t, ctx, "the diff")
	})

	t.Run("counts", func(t *testing.T) {
		for _, c := range []struct{ what, link, attr string }{
			{"the event trigger", `#event-triggers a.count-runs`, "attr.event=stock.low"},
			{"the schedule", `#definition-schedules tr[data-schedule="nightly-report"] a.count-runs`, "attr.schedule_id=nightly-report"},
		} {
			run(t, ctx, "open the definition", chromedp.Navigate(edit),
				chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
			if got := text(t, ctx, c.link); got != "1" {
				t.Errorf("%s's count = %q, want 1", c.what, got)
			}
			if href := attrOf(t, ctx, c.link, "href"); !strings.Contains(href, "definition=nightly") || !strings.Contains(href, c.attr) {
				t.Errorf("%s's count links to %s", c.what, href)
			}
			run(t, ctx, "follow "+c.what+"'s count", chromedp.Click(chromedp.CSS(c.link)),
				chromedp.WaitVisible(chromedp.CSS("#runs-page")))
			if n := count(t, ctx, "#runs tbody tr[data-run]"); n != 1 {
				t.Errorf("%s's runs list has %d runs, want 1", c.what, n)
			}
			if got := text(t, ctx, "#attr-filters"); !strings.Contains(got, strings.Replace(strings.TrimPrefix(c.attr, "attr."), "=", " = ", 1)) {
				t.Errorf("%s's runs list says %q of its filter", c.what, got)
			}
		}
		shoot(t, ctx, "definition-count-runs")
		axeBothThemes(t, ctx, "the runs a count links to")
		run(t, ctx, "open the definition", chromedp.Navigate(edit),
			chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
		shoot(t, ctx, "definition-counts")
	})

	t.Run("unpublish", func(t *testing.T) {
		before := dialogs.Load()
		run(t, ctx, "open the definition", chromedp.Navigate(edit),
			chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)),
			chromedp.Click(chromedp.CSS("#unpublish-2")),
			chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#versions tr[data-version="2"] .status.skip`)))
		if got := dialogs.Load() - before; got != 1 {
			t.Errorf("%d questions before unpublishing, want 1", got)
		}
		if got := text(t, ctx, "#notice"); !strings.Contains(got, "Unpublished v2") {
			t.Errorf("after unpublishing the notice says %q", got)
		}
		badge := `document.querySelector('#versions tr[data-version="2"] .status.skip').getBoundingClientRect()`
		if left, width := jsNum(ctx, t, badge+".left"), jsNum(ctx, t, badge+".width"); left < 0 || width == 0 {
			t.Errorf("v2's unpublished badge is off the page (left %.0f, width %.0f)", left, width)
		}
		if n := count(t, ctx, "#unpublish-2"); n != 0 {
			t.Error("v2 is still offered for unpublishing")
		}
		code, def := api(t, p, "GET", "/definitions/nightly", "", "")
		if vs, _ := def["versions"].([]any); code != 200 || len(vs) != 2 || fmt.Sprint(vs[0].(map[string]any)["published"]) != "false" {
			t.Errorf("the API after unpublishing: %d %v", code, def["versions"])
		}
		shoot(t, ctx, "definition-unpublished")
		axeBothThemes(t, ctx, "the definition page after unpublishing")
	})
}

// axeBothThemes fails the test on a serious or critical axe finding on
// the page, light or dark.
func axeBothThemes(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	var found []string
	for _, scheme := range []string{"light", "dark"} {
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		}); err != nil {
			t.Fatalf("emulate %s: %v", scheme, err)
		}
		settle(t, ctx)
		for _, v := range axeCheck(t, ctx) {
			found = append(found, fmt.Sprintf("%s (%s): %s (%s) %s at %s", what, scheme, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; ")))
		}
	}
	_, _ = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	if len(found) > 0 {
		t.Errorf("%d serious or critical findings:\n%s", len(found), strings.Join(found, "\n"))
	}
}
