package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/ductor/ductor/app/testdb"
)

// startWithOIDC runs dev with an identity provider that logs alice in.
func startWithOIDC(t *testing.T) *program {
	t.Helper()
	idp := startProvider(t)
	idp.QueueUser(&mockoidc.MockUser{Subject: "alice-1", Email: "alice@example.com", EmailVerified: true})
	_, dbURL := testdb.SchemaURL(t)
	env := map[string]string{
		"DATABASE_URL": dbURL, "DUCTOR_ADDR": "127.0.0.1:0",
		"OIDC_ISSUER": idp.Issuer(), "OIDC_CLIENT_ID": idp.ClientID, "OIDC_CLIENT_SECRET": idp.ClientSecret,
	}
	ductorCLI(t, env, "migrate")
	p := start(t, env, "dev")
	ductorCLI(t, env, "member", "add", "--tenant", "dev", "--email", "alice@example.com", "--role", "admin")
	return p
}

// A login whose next names another site, hidden behind a tab that
// browsers strip, ends on this site.
func TestLoginNextStaysOnSiteInChromium(t *testing.T) {
	t.Parallel()
	p := startWithOIDC(t)
	ctx := newBrowser(t)
	run(t, ctx, "log in with a hostile next", chromedp.Navigate(p.BaseURL+"/login/oidc?next=/%09/evil.example"),
		chromedp.WaitVisible(chromedp.CSS(".user-email")))
	href := location(t, ctx)
	site, _ := url.Parse(p.BaseURL)
	if u, err := url.Parse(href); err != nil || u.Host != site.Host || strings.Contains(href, "evil") {
		t.Fatalf("after login the browser is at %q, want %s", href, p.BaseURL)
	}
}

func location(t *testing.T, ctx context.Context) string {
	t.Helper()
	var href string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		h, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		if err == nil && !strings.Contains(h, "/login") {
			return h
		}
		href = h
		time.Sleep(20 * time.Millisecond) // poll interval
	}
	return href
}
