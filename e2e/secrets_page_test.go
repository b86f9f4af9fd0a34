package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ductor/ductor/app/testdb"
)

// TestSecretsPageShowsUsesInChromium: Settings → Secrets shows, beside each
// secret, the published definition versions whose steps reference it,
// each a link to its version on the definition's page; a secret nothing
// references says so, and the value is on no page.
func TestSecretsPageShowsUsesInChromium(t *testing.T) {
	t.Parallel()
	_, url := testdb.SchemaURL(t)
	p := start(t, map[string]string{"DATABASE_URL": url, "DUCTOR_ADDR": "127.0.0.1:0",
		"DUCTOR_SECRET_KEY": "an-e2e-secret-key-of-at-least-32-characters"}, "dev")
	const value = "xoxb-e2e-secret-page-value"
	for _, name := range []string{"CHAT_TOKEN", "IDLE_TOKEN"} {
		if code, out := api(t, p, "PUT", "/secrets/"+name, "application/json", `{"value": "`+value+`"}`); code != http.StatusCreated {
			t.Fatalf("set %s: %d %v", name, code, out)
		}
	}
	for _, doc := range []string{
		"key: notify\nsteps:\n  - {ref: post, type: http, with: {url: \"https://chat.example/\", auth: {bearer: CHAT_TOKEN}}}\n",
		"key: billing\nsteps:\n  - {ref: charge, type: task, with: {handler: charge, secrets: [CHAT_TOKEN]}}\n",
		"key: plain\nname: IDLE_TOKEN\nsteps:\n  - {ref: t, type: transform, with: {expr: '1'}}\n",
	} {
		key := strings.Fields(doc)[1]
		if code, out := api(t, p, "POST", "/definitions/"+key+"/versions", "application/yaml", doc); code != http.StatusCreated {
			t.Fatalf("publish %s: %d %v", key, code, out)
		}
	}

	ctx := newBrowser(t)
	run(t, ctx, "dev login and open the secrets page", chromedp.Navigate(p.BaseURL+"/login"),
		chromedp.Click(chromedp.CSS("#dev-login")), chromedp.WaitVisible(chromedp.CSS(".user-email")),
		chromedp.Navigate(p.BaseURL+"/t/dev/settings/secrets"), chromedp.WaitVisible(chromedp.CSS(`#secrets tr[data-secret="CHAT_TOKEN"]`)))
	if got := strings.Join(strings.Fields(text(t, ctx, `tr[data-secret="CHAT_TOKEN"] td.secret-uses`)), " "); got != "billing v1, notify v1" {
		t.Errorf("CHAT_TOKEN is used by %q", got)
	}
	if got := text(t, ctx, `tr[data-secret="IDLE_TOKEN"] td.secret-uses`); got != "no published definition" {
		t.Errorf("IDLE_TOKEN is used by %q", got)
	}
	page, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil || strings.Contains(page, value) {
		t.Fatalf("the page shows the value (%v)", err)
	}
	run(t, ctx, "follow the use to the definition",
		chromedp.Click(chromedp.CSS(`tr[data-secret="CHAT_TOKEN"] a.secret-use[data-key="notify"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#versions tr#version-1`)))
	if loc := location(t, ctx); !strings.HasSuffix(loc, "/t/dev/definitions/notify/edit#version-1") {
		t.Errorf("the link led to %s", loc)
	}
}
