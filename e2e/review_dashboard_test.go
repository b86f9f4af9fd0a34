package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/testdb"
)

// dialogLog accepts every JavaScript dialog of a tab and keeps what each
// said.
type dialogLog struct {
	mu   sync.Mutex
	said []string
}

func logDialogs(ctx context.Context) *dialogLog {
	l := &dialogLog{}
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			l.mu.Lock()
			l.said = append(l.said, ev.Message)
			l.mu.Unlock()
			if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
				return
			}
		}
	}()
	return l
}

// last is what the latest dialog said.
func (l *dialogLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.said) == 0 {
		return ""
	}
	return l.said[len(l.said)-1]
}

// axeAll runs axe-core with its experimental rules, off by default,
// turned on too (label-content-name-mismatch is one), and returns the
// serious and critical findings.
func axeAll(t *testing.T, ctx context.Context) []axeFinding {
	t.Helper()
	src, err := axeScript()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](src+";0")); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const rules = {};
		for (const r of axe.getRules(["experimental"])) rules[r.ruleId] = { enabled: true };
		return axe.run(document, { rules, resultTypes: ["violations"] }).then((r) => JSON.stringify(
			r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
				.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" "))}))));
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var out []axeFinding
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The dashboard's review items in Chromium: a bulk cancel of a filter
// the list only estimates confirms the exact count and cancels that many;
// the batch's way back to the runs keeps the filter; the rotate confirm
// says the old secret is accepted for 24 hours; error pages keep the
// tenant's navigation and a way back; the definitions list searches; the
// editor's arrowheads are light in the dark; and every page, the editor,
// a batch, a webhook, a schedule, a diff and the error pages included,
// has no serious or critical axe finding with the experimental rules on (the
// tenant and account menus' label-content-name-mismatch included), in
// both themes.
func TestDashboardReviewItemsInChromium(t *testing.T) {
	t.Parallel()
	_, dbURL := testdb.SchemaURL(t)
	p := start(t, map[string]string{"DATABASE_URL": dbURL, "DUCTOR_ADDR": "127.0.0.1:0"}, "dev")
	for _, doc := range []string{
		"key: parked\nsteps:\n  - { ref: hold, type: signal, with: { name: never } }\n",
		"key: nightly\nsteps:\n  - {ref: a, type: transform, with: {expr: '1'}}\n  - {ref: b, type: transform, with: {expr: '2'}}\nedges:\n  - {from: a, to: b}\ntriggers:\n  - schedule: {id: nightly-report, cron: '30 2 * * *'}\n",
		"key: nightly\nsteps:\n  - {ref: a, type: transform, with: {expr: '10'}}\n  - {ref: b, type: transform, with: {expr: '2'}}\nedges:\n  - {from: a, to: b}\ntriggers:\n  - schedule: {id: nightly-report, cron: '30 2 * * *'}\n",
	} {
		key := strings.TrimPrefix(strings.SplitN(doc, "\n", 2)[0], "key: ")
		if code, out := api(t, p, "POST", "/definitions/"+key+"/versions", "application/yaml", doc); code != http.StatusCreated {
			t.Fatalf("publish %s: %d %v", key, code, out)
		}
	}
	// 1,050 waiting runs of parked: more than the list counts (1,000), so
	// it only estimates them. One is started; the others are its copies,
	// written straight to the table (1,050 starts would wait on the dev
	// key's rate limit).
	code, out := api(t, p, "POST", "/runs", "application/json", `{"definition": "parked"}`)
	if code != http.StatusCreated {
		t.Fatalf("start: %d %v", code, out)
	}
	waitAPIStatus(t, p, out["id"].(string), "waiting")
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(context.Background(), `INSERT INTO run SELECT (jsonb_populate_record(r, jsonb_build_object('id', n.id, 'root_run_id', n.id))).*
		FROM run r, (SELECT gen_random_uuid() AS id FROM generate_series(1, 1049)) n WHERE r.id = $1`, out["id"]); err != nil {
		t.Fatalf("copy the run: %v", err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM run WHERE definition_key = 'parked' AND status = 'waiting'`).Scan(&n); err != nil || n != 1050 {
		t.Fatalf("%d waiting runs of parked (%v), want 1,050", n, err)
	}
	if code, out := api(t, p, "POST", "/webhooks", "application/json", `{"id": "shop", "event": "order.placed"}`); code != http.StatusCreated {
		t.Fatalf("create the webhook: %d %v", code, out)
	}

	ctx := newBrowser(t)
	dialogs := logDialogs(ctx)
	devLogin(t, ctx, p)
	var batchPage string

	t.Run("bulk cancel confirms the exact count", func(t *testing.T) {
		run(t, ctx, "filter the runs", chromedp.Navigate(p.BaseURL+"/t/dev/runs?definition=parked&status=waiting"),
			chromedp.WaitVisible(chromedp.CSS("#select-matching")))
		if got := attrOf(t, ctx, "#runs-page", "data-estimated"); got != "true" {
			t.Fatalf("the list of 1,050 runs is not estimated (%q): the test needs an estimate", got)
		}
		run(t, ctx, "select every matching run", chromedp.Click(chromedp.CSS("#select-matching")))
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("bulk-cancel").dataset.confirm.includes("1,050 runs")`, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			probe, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => { const f = document.getElementById("bulk-form"); const u = f.action.replace(/\/batch$/, "/count") + "?" + f.querySelector('input[name="filter"]').value; const r = await fetch(u, {headers: {Accept: "application/json"}}); return u + " " + r.status + " " + await r.text(); })()`, chromedp.EvalAwaitPromise))
			t.Fatalf("the confirmation never counted exactly: %q, the selection %q; %s", attrOf(t, ctx, "#bulk-cancel", "data-confirm"), text(t, ctx, "#selected-count"), probe)
		}
		shoot(t, ctx, "review-bulk-selected")
		run(t, ctx, "cancel them", chromedp.SendKeys(chromedp.CSS("#bulk-reason"), "too many"),
			chromedp.Click(chromedp.CSS("#bulk-cancel")),
			chromedp.WaitVisible(chromedp.CSS("#batch-progress")))
		if got := dialogs.last(); !strings.HasPrefix(got, "Cancel all 1,050 runs matching this filter?") || strings.Contains(got, "about") {
			t.Errorf("the confirmation said %q, want the exact count", got)
		}
		waitForWithin(t, ctx, time.Minute, "the batch to finish", `document.getElementById("batch-status").textContent === "completed"`)
		if got := text(t, ctx, "#batch-counts"); got != "1,050 of 1,050 cancelled, 0 failed" && got != "1050 of 1050 cancelled, 0 failed" {
			t.Errorf("the batch says %q, want the 1,050 it confirmed", got)
		}
		batchPage = location(t, ctx)
		shoot(t, ctx, "review-bulk-batch")
	})

	t.Run("back to the runs keeps the filter", func(t *testing.T) {
		run(t, ctx, "open the batch", chromedp.Navigate(batchPage), chromedp.WaitVisible(chromedp.CSS("#back-to-runs")))
		run(t, ctx, "back to the runs", chromedp.Click(chromedp.CSS("#back-to-runs")), chromedp.WaitVisible(chromedp.CSS("#runs-page")))
		loc := location(t, ctx)
		if !strings.Contains(loc, "definition=parked") || !strings.Contains(loc, "status=waiting") {
			t.Errorf("back to the runs led to %s, without the filter", loc)
		}
		if got := value(t, ctx, "#filter-definition"); got != "parked" {
			t.Errorf("the runs list's definition filter says %q", got)
		}
	})

	t.Run("rotate confirm", func(t *testing.T) {
		run(t, ctx, "rotate the webhook's secret", chromedp.Navigate(p.BaseURL+"/t/dev/webhooks"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-webhook="shop"] form[action$="/rotate"] button`)),
			chromedp.Click(chromedp.CSS(`tr[data-webhook="shop"] form[action$="/rotate"] button`)),
			chromedp.WaitVisible(chromedp.CSS("#new-secret")))
		if got := dialogs.last(); !strings.Contains(got, "still accepted for 24 hours") || strings.Contains(got, "at once") {
			t.Errorf("the rotate confirm said %q", got)
		}
		shoot(t, ctx, "review-webhook-rotated")
	})

	t.Run("error pages", func(t *testing.T) {
		for _, c := range []struct{ name, path string }{
			{"run", "/t/dev/runs/00000000-0000-4000-8000-000000000001"},
			{"definition", "/t/dev/definitions/no-such/edit"},
			{"page", "/t/dev/no-such-page"},
		} {
			res, err := chromedp.RunResponse(ctx, chromedp.Navigate(p.BaseURL+c.path))
			if err != nil {
				t.Fatalf("open %s: %v", c.path, err)
			}
			if res.Status != http.StatusNotFound {
				t.Errorf("%s answered %d, want 404", c.path, res.Status)
			}
			if n := count(t, ctx, "nav.main-nav a"); n < 4 {
				t.Errorf("the %s error page has %d navigation links, want the tenant's", c.name, n)
			}
			if n := count(t, ctx, ".user-email"); n != 1 {
				t.Errorf("the %s error page shows no account", c.name)
			}
			if n := count(t, ctx, `main a[href$="/t/dev/runs"], main a[href$="/t/dev"]`); n == 0 {
				t.Errorf("the %s error page offers no way back: %q", c.name, text(t, ctx, "main"))
			}
			shoot(t, ctx, "review-error-"+c.name)
		}
	})

	t.Run("definitions search", func(t *testing.T) {
		run(t, ctx, "search the definitions", chromedp.Navigate(p.BaseURL+"/t/dev/definitions"),
			chromedp.WaitVisible(chromedp.CSS("#definitions-q")),
			chromedp.SendKeys(chromedp.CSS("#definitions-q"), "night"),
			chromedp.Submit(chromedp.CSS("#definitions-q")),
			chromedp.WaitReady(chromedp.CSS(`#definitions-q[value="night"]`)))
		if n, other := count(t, ctx, `tr[data-definition="nightly"]`), count(t, ctx, `tr[data-definition="parked"]`); n != 1 || other != 0 {
			t.Errorf("the search for night lists nightly %d times and parked %d", n, other)
		}
		shoot(t, ctx, "review-definitions-search")
	})

	t.Run("editor arrowheads in the dark", func(t *testing.T) {
		run(t, ctx, "open the editor", chromedp.Navigate(p.BaseURL+"/t/dev/definitions/nightly/edit"),
			chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)),
			chromedp.WaitVisible(chromedp.CSS(`g.edge[data-from="a"]`)))
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
		}); err != nil {
			t.Fatal(err)
		}
		settle(t, ctx)
		fill, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#graph marker path.edge-arrow")).fill`))
		_, _ = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		if err != nil || luminance(t, fill) < 0.5 {
			t.Errorf("the editor's arrowheads are %s in the dark (%v)", fill, err)
		}
		shoot(t, ctx, "review-editor-arrowheads")
	})

	t.Run("axe with the experimental rules", func(t *testing.T) {
		var found []string
		for _, path := range []string{
			"/t/dev", "/t/dev/runs", "/t/dev/runs?definition=parked", "/t/dev/inbox", "/t/dev/inbox?tab=decided",
			"/t/dev/definitions", "/t/dev/definitions/nightly/edit", "/t/dev/definitions/nightly/diff?from=1&to=2",
			"/t/dev/schedules", "/t/dev/schedules/nightly-report", "/t/dev/webhooks", "/t/dev/webhooks/shop",
			"/t/dev/subscriptions", "/t/dev/usage", "/t/dev/settings", "/t/dev/settings/keys", "/t/dev/settings/members",
			"/t/dev/settings/secrets", "/t/dev/settings/audit", strings.TrimPrefix(batchPage, p.BaseURL),
			"/t/dev/runs/00000000-0000-4000-8000-000000000001", "/t/dev/no-such-page",
		} {
			run(t, ctx, "open "+path, chromedp.Navigate(p.BaseURL+path), chromedp.WaitVisible(chromedp.CSS(".user-email")))
			for _, scheme := range []string{"light", "dark"} {
				if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
				}); err != nil {
					t.Fatalf("emulate %s: %v", scheme, err)
				}
				settle(t, ctx)
				for _, v := range axeAll(t, ctx) {
					found = append(found, fmt.Sprintf("%s (%s): %s (%s) %s at %s", path, scheme, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; ")))
				}
			}
		}
		_, _ = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		if len(found) > 0 {
			t.Errorf("%d serious or critical findings:\n%s", len(found), strings.Join(found, "\n"))
		}
	})
}
