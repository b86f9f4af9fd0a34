package e2e

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
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
	testwait.Until(context.Background(), 10*time.Second, func() bool {
		h, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		href = h
		return err == nil && !strings.Contains(h, "/login")
	})
	return href
}

// consoleLog collects what the tab writes to its console, the browser's
// reports of Content-Security-Policy violations among it.
type consoleLog struct {
	mu   sync.Mutex
	msgs []string
	stop func()
}

func watchConsole(ctx context.Context) *consoleLog {
	ctx, cancel := context.WithCancel(ctx)
	l := &consoleLog{}
	done := make(chan struct{})
	messages := chromedp.Console(ctx)
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			l.mu.Lock()
			l.msgs = append(l.msgs, m.String())
			l.mu.Unlock()
		}
	}()
	l.stop = func() { cancel(); <-done }
	return l
}

// violations are the console's lines about the content security policy.
func (l *consoleLog) violations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, m := range l.msgs {
		if strings.Contains(m, "Content Security Policy") || strings.Contains(m, "Content-Security-Policy") {
			out = append(out, m)
		}
	}
	return out
}

// The dashboard's pages work under its content security policy, which
// Chromium enforces: the editor and the inspector run their scripts, no
// page causes a violation, and an injected inline handler is refused.
func TestPagesRunUnderTheCSPInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	id := publishRun(t, p, "csp", `
key: csp
steps:
  - { ref: ok, type: approval, with: { approvers: [ "role:owner" ], title: Check the policy } }
`, map[string]any{"amount": 1})
	ctx := newBrowser(t)
	console := watchConsole(ctx)
	defer console.stop()
	devLogin(t, ctx, p)
	run(t, ctx, "open the editor", chromedp.Navigate(p.BaseURL+"/t/dev/definitions/csp/edit"),
		chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
	run(t, ctx, "open the run", chromedp.Navigate(p.BaseURL+"/t/dev/runs/"+id),
		chromedp.WaitVisible(chromedp.CSS(`g.gnode[data-ref="ok"]`)))
	for _, page := range []string{"/t/dev", "/t/dev/runs", "/t/dev/definitions", "/t/dev/inbox", "/t/dev/settings", "/t/dev/settings/keys", "/t/dev/settings/members", "/t/dev/settings/audit"} {
		run(t, ctx, "open "+page, chromedp.Navigate(p.BaseURL+page), chromedp.WaitVisible(chromedp.CSS(".user-email")))
	}
	if v := console.violations(); len(v) > 0 {
		t.Fatalf("the pages violated the policy:\n%s", strings.Join(v, "\n"))
	}
	run(t, ctx, "inject an inline handler", chromedp.Evaluate[chromedp.Void](
		`document.body.insertAdjacentHTML("beforeend", '<img src="/nope.png" onerror="document.title = \'pwned\'">')`))
	testwait.Until(context.Background(), 10*time.Second, func() bool { return len(console.violations()) > 0 })
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`))
	if err != nil || title == "pwned" || len(console.violations()) == 0 {
		t.Fatalf("an injected inline handler ran (title %q, %v) or went unreported", title, err)
	}
}
