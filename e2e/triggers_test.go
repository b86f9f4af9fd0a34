package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/app/webhook"
)

// The schedules and webhooks pages, in Chromium under the content
// security policy: an interval schedule is created and listed with its
// next run, paused with a note, unpaused and run now, and its action
// links to the run; a webhook is created with its secret shown once,
// rotated after a question, sent a signed delivery from outside, and shows the delivery's
// result and the run its event started; both are deleted after a
// question, and the webhook's deliveries are then refused.
func TestSchedulesAndWebhooksPagesInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	for key, doc := range map[string]string{
		"nightly":  "key: nightly\nsteps:\n  - {ref: build, type: transform, with: {expr: '\"built\"'}}\n",
		"on-order": "key: on-order\nsteps:\n  - {ref: ship, type: transform, with: {expr: 'input.id'}}\ntriggers:\n  - {event: order.placed}\n",
	} {
		if code, out := api(t, p, "POST", "/definitions/"+key+"/versions", "application/yaml", doc); code != http.StatusCreated {
			t.Fatalf("publish %s: %d %v", key, code, out)
		}
	}
	ctx := newBrowser(t)
	var accept atomic.Bool
	accept.Store(true)
	dialogs := answerDialogs(ctx, &accept)
	console := watchConsole(ctx)
	defer console.stop()
	devLogin(t, ctx, p)

	run(t, ctx, "create a schedule", chromedp.Navigate(p.BaseURL+"/t/dev/schedules"),
		chromedp.SendKeys(chromedp.CSS("#sc-id"), "nightly-hourly"),
		chromedp.SendKeys(chromedp.CSS("#sc-def"), "nightly"),
		chromedp.SendKeys(chromedp.CSS("#sc-interval"), "1h"),
		chromedp.Click(chromedp.CSS(`#create-schedule button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#pause-form")))
	run(t, ctx, "list schedules", chromedp.Navigate(p.BaseURL+"/t/dev/schedules"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-schedule="nightly-hourly"]`)))
	shoot(t, ctx, "1-schedules")
	row := text(t, ctx, `tr[data-schedule="nightly-hourly"]`)
	if !strings.Contains(row, "every 1h") || !strings.Contains(row, "UTC") || !strings.Contains(row, "active") {
		t.Errorf("the schedule's row = %q, want its spec, next run and state", row)
	}

	run(t, ctx, "pause it with a note", chromedp.Click(chromedp.CSS(`tr[data-schedule="nightly-hourly"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#pause-note")),
		chromedp.SendKeys(chromedp.CSS("#pause-note"), "freeze week"),
		chromedp.Click(chromedp.CSS(`#pause-form button`)),
		chromedp.WaitReady(chromedp.CSS(`#pause-form input[name="paused"][value="false"]`)))
	shoot(t, ctx, "2-paused")
	if got := text(t, ctx, "#schedule-state"); !strings.Contains(got, "paused") || !strings.Contains(got, "freeze week") {
		t.Errorf("state after pausing = %q", got)
	}
	run(t, ctx, "unpause it", chromedp.Click(chromedp.CSS(`#pause-form button`)),
		chromedp.WaitVisible(chromedp.CSS("#pause-note")))
	if got := text(t, ctx, "#schedule-state"); !strings.Contains(got, "active") {
		t.Errorf("state after unpausing = %q", got)
	}
	run(t, ctx, "run it now", chromedp.Click(chromedp.CSS("#trigger-now")),
		chromedp.WaitVisible(chromedp.CSS(`#actions a[href*="/runs/"]`)))
	shoot(t, ctx, "3-run-now")
	if got := text(t, ctx, `p.notice`); !strings.Contains(got, "running, run ") {
		t.Errorf("after run now: %q", got)
	}
	run(t, ctx, "follow the action to its run", chromedp.Click(chromedp.CSS(`#actions a[href*="/runs/"]`)),
		chromedp.WaitVisible(chromedp.CSS(`g.gnode[data-ref="build"]`)))
	shoot(t, ctx, "4-scheduled-run")
	run(t, ctx, "delete the schedule", chromedp.Navigate(p.BaseURL+"/t/dev/schedules/nightly-hourly"),
		chromedp.WaitVisible(chromedp.CSS(`#delete-schedule button`)),
		chromedp.Click(chromedp.CSS(`#delete-schedule button`)),
		chromedp.WaitVisible(chromedp.CSS(`#create-schedule`)))
	if dialogs.Load() != 1 {
		t.Errorf("%d questions before deleting the schedule, want 1", dialogs.Load())
	}
	if n := count(t, ctx, `tr[data-schedule="nightly-hourly"]`); n != 0 {
		t.Errorf("the deleted schedule is still listed")
	}
	if code, _ := api(t, p, "GET", "/schedules/nightly-hourly", "", ""); code != http.StatusNotFound {
		t.Errorf("GET of the deleted schedule = %d, want 404", code)
	}

	run(t, ctx, "create a webhook", chromedp.Navigate(p.BaseURL+"/t/dev/webhooks"),
		chromedp.SendKeys(chromedp.CSS("#wh-id"), "shop"),
		chromedp.SendKeys(chromedp.CSS("#wh-event"), "order.placed"),
		chromedp.Click(chromedp.CSS(`#create-webhook button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#new-secret")))
	shoot(t, ctx, "5-webhook-created")
	first := text(t, ctx, "#new-secret")
	if !strings.HasPrefix(first, "whsec_") {
		t.Fatalf("the new webhook's secret shows as %q", first)
	}
	submit(t, ctx, "rotate its secret", `tr[data-webhook="shop"] form[action$="/rotate"] button`)
	if dialogs.Load() != 2 {
		t.Errorf("%d questions after rotating the secret, want 2", dialogs.Load())
	}
	secret := text(t, ctx, "#new-secret")
	if !strings.HasPrefix(secret, "whsec_") || secret == first {
		t.Fatalf("the rotated secret shows as %q (was %q)", secret, first)
	}
	url := text(t, ctx, `tr[data-webhook="shop"] td.mono:nth-of-type(4)`)
	run(t, ctx, "open the webhooks again", chromedp.Navigate(p.BaseURL+"/t/dev/webhooks"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-webhook="shop"]`)))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#new-secret").length`)); err != nil || n != 0 {
		t.Errorf("the secret is shown again (%d, %v)", n, err)
	}

	body := `{"id": "o-17", "total": 240.0}`
	headers := signedDelivery(secret, "msg_e2e", body)
	if code := postDelivery(t, url, body, headers); code != http.StatusAccepted {
		t.Fatalf("signed delivery to %s = %d, want 202", url, code)
	}
	link := `tr[data-webhook="shop"] a[href*="/runs/"]`
	if !testwait.Until(context.Background(), 20*time.Second, func() bool {
		run(t, ctx, "see the delivery", chromedp.Navigate(p.BaseURL+"/t/dev/webhooks"),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-webhook="shop"]`)))
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+link+"`"+`).length`))
		return err == nil && n == 1
	}) {
		t.Fatalf("the webhook's row shows no run after 20 s: %q", text(t, ctx, `tr[data-webhook="shop"]`))
	}
	shoot(t, ctx, "6-delivered")
	if got := text(t, ctx, `tr[data-webhook="shop"] .last-delivery`); !strings.Contains(got, "accepted (202)") {
		t.Errorf("last delivery = %q, want accepted (202)", got)
	}
	run(t, ctx, "follow the delivery to its run", chromedp.Click(chromedp.CSS(link)),
		chromedp.WaitVisible(chromedp.CSS(`g.gnode[data-ref="ship"]`)))
	shoot(t, ctx, "7-delivered-run")
	run(t, ctx, "delete the webhook", chromedp.Navigate(p.BaseURL+"/t/dev/webhooks"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-webhook="shop"]`)),
		chromedp.Click(chromedp.CSS(`tr[data-webhook="shop"] form[action$="/delete"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.empty`)))
	if dialogs.Load() != 3 {
		t.Errorf("%d questions after deleting the webhook, want 3", dialogs.Load())
	}
	shoot(t, ctx, "8-deleted")
	if code := postDelivery(t, url, body, signedDelivery(secret, "msg_e2e_2", body)); code != http.StatusNotFound {
		t.Errorf("a delivery to the deleted webhook = %d, want 404", code)
	}
	if v := console.violations(); len(v) > 0 {
		t.Fatalf("the pages violated the policy:\n%s", strings.Join(v, "\n"))
	}
}

// submit clicks a form's button and waits for the page it answers with,
// which must be a 200.
func submit(t *testing.T, ctx context.Context, what, button string) {
	t.Helper()
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(button)))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if res.Status != http.StatusOK {
		t.Fatalf("%s: the page answered %d", what, res.Status)
	}
}

// signedDelivery signs a delivery as a Standard Webhooks sender does.
func signedDelivery(secret, id, body string) map[string]string {
	ts := time.Now().Unix()
	return map[string]string{
		"webhook-id": id, "webhook-timestamp": strconv.FormatInt(ts, 10),
		"webhook-signature": webhook.SignStandard(secret, id, ts, []byte(body)),
	}
}

func postDelivery(t *testing.T, url, body string, headers map[string]string) int {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
