package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestWebhookDeliveryLogInChromium: a good delivery, then a forged one;
// the webhook's page lists both, newest first, the forged one refused
// for its signature and the good one with the run it started, which it
// links to; the accepted filter keeps the good one, and the SDK reads
// the same log.
func TestWebhookDeliveryLogInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	if code, out := api(t, p, "POST", "/definitions/on-order/versions", "application/yaml",
		"key: on-order\nsteps:\n  - { ref: ship, type: task, with: { handler: builtin.noop } }\ntriggers:\n  - { event: order.placed }\n"); code != http.StatusCreated {
		t.Fatalf("publish: %d %v", code, out)
	}
	code, hook := api(t, p, "POST", "/webhooks", "application/json", `{"id": "shop", "event": "order.placed"}`)
	if code != http.StatusCreated {
		t.Fatalf("create the webhook: %d %v", code, hook)
	}
	secret, url := hook["secret"].(string), hook["url"].(string)
	body := `{"id": "o-1"}`
	if code := postDelivery(t, url, body, signedDelivery(secret, "msg_good", body)); code != http.StatusAccepted {
		t.Fatalf("good delivery = %d, want 202", code)
	}
	forged := "whsec_" + strings.Repeat("A", 43) + "="
	if code := postDelivery(t, url, body, signedDelivery(forged, "msg_forged", body)); code != http.StatusUnauthorized {
		t.Fatalf("forged delivery = %d, want 401", code)
	}
	_, started := api(t, p, "GET", "/runs?definition=on-order", "", "")
	runs, _ := started["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("runs = %v, want the one the good delivery started", started)
	}
	runID := runs[0].(map[string]any)["id"].(string)

	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "open the webhook from the list", chromedp.Navigate(p.BaseURL+"/t/dev/webhooks"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-webhook="shop"] a.webhook-page`)),
		chromedp.Click(chromedp.CSS(`tr[data-webhook="shop"] a.webhook-page`)),
		chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	shoot(t, ctx, "webhook-deliveries")
	if n := count(t, ctx, "#deliveries tr.delivery"); n != 2 {
		t.Fatalf("%d deliveries listed, want 2", n)
	}
	if got := text(t, ctx, "#deliveries tr.delivery:nth-child(1)"); !strings.Contains(got, "refused") || !strings.Contains(got, "bad signature") || !strings.Contains(got, "401") {
		t.Errorf("the newest delivery reads %q, want the forged one refused for its signature", got)
	}
	good := `#deliveries tr.delivery:nth-child(2)`
	if got := text(t, ctx, good); !strings.Contains(got, "accepted") || !strings.Contains(got, "202") || !strings.Contains(got, runID[:8]) {
		t.Errorf("the older delivery reads %q, want the good one with run %s", got, runID[:8])
	}
	run(t, ctx, "keep the accepted ones", chromedp.Click(chromedp.CSS(`#delivery-filter a[href$="result=accepted"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#delivery-filter a[aria-current="page"][href$="result=accepted"]`)))
	if n := count(t, ctx, `#deliveries tr.delivery[data-result="accepted"]`); n != 1 || count(t, ctx, "#deliveries tr.delivery") != 1 {
		t.Errorf("the accepted filter lists %d accepted of %d", n, count(t, ctx, "#deliveries tr.delivery"))
	}
	run(t, ctx, "follow the good delivery to its run", chromedp.Click(chromedp.CSS(`#deliveries a[href$="/runs/`+runID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`g.gnode[data-ref="ship"]`)))

	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ds, err := sdkClient(t, p.BaseURL, p.devKey(t)).Triggers().WebhookDeliveries(sctx, "shop", "", 0)
	if err != nil || len(ds) != 2 || ds[0].Result != "refused" || ds[0].Reason != "bad_signature" ||
		ds[1].Result != "accepted" || len(ds[1].RunIDs) != 1 || ds[1].RunIDs[0] != runID {
		t.Errorf("WebhookDeliveries = %+v, %v; want the forged one, then the good one with its run", ds, err)
	}
}
