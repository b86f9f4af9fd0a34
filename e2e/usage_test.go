package e2e

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// The usage page renders a month of the tenant's use (and not another
// tenant's), a chart a metric and its quotas, at 1440 and 800 px, light
// and dark: usage-*.png under the test's artifacts.
func TestUsagePageInChromium(t *testing.T) {
	t.Parallel()
	pool, url := testdb.SchemaURL(t)
	p := start(t, map[string]string{"DATABASE_URL": url, "DUCTOR_ADDR": "127.0.0.1:0"}, "dev")
	ctx := context.Background()
	s := store.New(pool)
	dev, err := s.TenantGetBySlug(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	other := testdb.Tenant(t, s, nil)
	if _, err := pool.Exec(ctx, `
		INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, runs_started, runs_succeeded, runs_failed, steps, step_us, events, signals, webhooks, stored_bytes)
		SELECT $1::uuid, '2026-12-01'::date + d, 'orders', 'task', 20 + d, 18 + d, d % 3, 200 + 37 * (d % 9), 1500000 * (1 + d % 4), d % 5, d % 2, d % 3, 4096 * (d % 6)
		FROM generate_series(0, 30) d
		UNION ALL
		SELECT $1::uuid, '2026-12-01'::date + d, 'orders', 'http', 0, 0, 0, 10, 250000, 0, 0, 0, 0 FROM generate_series(0, 30) d
		UNION ALL
		SELECT $2::uuid, '2026-12-01'::date + d, 'other', 'task', 999999, 0, 0, 999999, 0, 0, 0, 0, 0 FROM generate_series(0, 30) d`,
		dev.ID, other.ID); err != nil {
		t.Fatal(err)
	}
	limit := int64(20000)
	if err := s.UsageTenantQuotaSet(ctx, dev.ID, store.QuotaChange{MonthlySteps: &limit}); err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t)
	run(t, br, "dev login", chromedp.Navigate(p.BaseURL+"/login"),
		chromedp.Click(chromedp.CSS("#dev-login")),
		chromedp.WaitVisible(chromedp.CSS(".user-email")))
	run(t, br, "open the usage page", chromedp.Navigate(p.BaseURL+"/t/dev/usage?month=2026-12"),
		chromedp.WaitVisible(chromedp.CSS("#chart-steps")))
	if n := jsNum(br, t, `document.querySelectorAll("#chart-steps rect.bar").length`); n != 31 {
		t.Errorf("the steps chart has %v bars, want 31", n)
	}
	if n := jsNum(br, t, `document.querySelectorAll(".usage-chart").length`); n < 6 {
		t.Errorf("%v charts", n)
	}
	if got := text(t, br, "#chart-runs figcaption"); got != "Runs started total 1085, peak 50 a day" {
		t.Errorf("runs caption %q", got)
	}
	if n, secs := text(t, br, `#usage-step-types tr[data-step-type="http"] td:nth-child(2)`),
		text(t, br, `#usage-step-types tr[data-step-type="http"] td:nth-child(3)`); n != "310" || secs != "7.8 s" {
		t.Errorf("http steps %q in %q, want 31 days × 10 steps of 0.025 s", n, secs)
	}
	if got := text(t, br, `#usage-step-types tbody tr:first-child td:first-child`); got != "task" {
		t.Errorf("first step type %q, want task (the most steps)", got)
	}
	if got := text(t, br, `tr[data-quota="monthly_steps"]`); got == "" {
		t.Error("no monthly_steps quota line")
	}
	if jsNum(br, t, `document.body.innerText.includes("999999") ? 1 : 0`) != 0 {
		t.Error("the page shows another tenant's use")
	}
	if w := jsNum(br, t, `document.documentElement.scrollWidth`); w > 1440 {
		t.Errorf("page is %v px wide", w)
	}
	shoot(t, br, "usage")
	run(t, br, "at 800 px", chromedp.EmulateViewport(800, 900))
	if w := jsNum(br, t, `document.documentElement.scrollWidth`); w > 800 {
		t.Errorf("at 800 px the page is %v px wide", w)
	}
}
