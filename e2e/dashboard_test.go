package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/ductor/ductor/app/cli"
	"github.com/ductor/ductor/app/testdb"
)

// startProvider runs an in-process OIDC provider: discovery, JWKS, code
// exchange with PKCE, ID tokens carrying the nonce.
func startProvider(t *testing.T) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

// ductorCLI runs a ductor command in-process with the environment given.
func ductorCLI(t *testing.T, environ map[string]string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	env := cli.Env{Getenv: func(k string) string { return environ[k] }, Stdout: &out, Stderr: io.Discard}
	if err := cli.Run(context.Background(), args, env); err != nil {
		t.Fatalf("ductor %v: %v", args, err)
	}
	return out.String()
}

// run runs browser steps and fails the test with what was being done.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	// Waited for, then read in one script: a live region the page
	// replaces between a query and a read would leave the read a node id
	// that is gone.
	if _, err := chromedp.Run(ctx, chromedp.WaitReady(chromedp.CSS(css))); err != nil {
		t.Fatalf("read %s: %v", css, err)
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).textContent`, css)))
	if err != nil {
		t.Fatalf("read %s: %v", css, err)
	}
	return strings.TrimSpace(s)
}

// TestDashboardLoginTenantsKeysLogout is a person's first visit: they log
// in through the identity provider (added to two tenants by the CLI, one
// before and one after dev started), switch tenant, create an API key that
// works on the API, revoke it and see the API refuse it, and log out.
func TestDashboardLoginTenantsKeysLogout(t *testing.T) {
	t.Parallel()
	idp := startProvider(t)
	idp.QueueUser(&mockoidc.MockUser{Subject: "alice-1", Email: "alice@example.com", EmailVerified: true})
	_, dbURL := testdb.SchemaURL(t)
	env := map[string]string{
		"DATABASE_URL": dbURL, "DUCTOR_ADDR": "127.0.0.1:0",
		"OIDC_ISSUER": idp.Issuer(), "OIDC_CLIENT_ID": idp.ClientID, "OIDC_CLIENT_SECRET": idp.ClientSecret,
	}
	ductorCLI(t, env, "migrate")
	ductorCLI(t, env, "tenant", "create", "acme", "--name", "Acme")
	ductorCLI(t, env, "member", "add", "--tenant", "acme", "--email", "alice@example.com", "--role", "viewer")
	p := start(t, env, "dev")
	ductorCLI(t, env, "member", "add", "--tenant", "dev", "--email", "alice@example.com", "--role", "admin")
	ctx := newBrowser(t)
	dialogs := acceptDialogs(ctx)

	run(t, ctx, "log in", chromedp.Navigate(p.BaseURL+"/login"),
		chromedp.Click(chromedp.CSS("#oidc-login")),
		chromedp.WaitVisible(chromedp.CSS(".user-email")))
	if got := text(t, ctx, ".user-email"); got != "alice@example.com" {
		t.Fatalf("signed in as %q", got)
	}
	if got := text(t, ctx, ".current-tenant"); got != "Acme" {
		t.Fatalf("first tenant shown is %q, want Acme", got)
	}

	run(t, ctx, "switch tenant", chromedp.Click(chromedp.CSS(".tenant-switcher summary")),
		chromedp.Click(chromedp.CSS(`.tenant-switcher a[data-tenant="dev"]`), chromedp.NodeVisible),
		chromedp.WaitReady(chromedp.CSS(`.tenant-switcher a[data-tenant="dev"][aria-current="true"]`)))
	if got := text(t, ctx, ".role"); got != "admin" {
		t.Fatalf("role in dev shown as %q", got)
	}

	secret := createKey(t, ctx)
	who := whoami(t, p.BaseURL, secret, 200)
	if who.KeyName != "e2e" || strings.Join(who.Scopes, ",") != "runs:read" {
		t.Fatalf("whoami with the new key = %+v", who)
	}

	run(t, ctx, "revoke the key",
		chromedp.Click(chromedp.CSS(`tr[data-key="`+who.KeyID+`"] button.revoke`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key="`+who.KeyID+`"] .status.fail`)))
	whoami(t, p.BaseURL, secret, 401)
	if dialogs.Load() != 1 {
		t.Errorf("revoking the key asked %d times, want once", dialogs.Load())
	}

	run(t, ctx, "log out", chromedp.Click(chromedp.CSS(".user-menu summary")),
		chromedp.Click(chromedp.CSS("button.logout"), chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.CSS("#oidc-login")))
	run(t, ctx, "open a tenant page after logout", chromedp.Navigate(p.BaseURL+"/t/dev/settings/keys"),
		chromedp.WaitVisible(chromedp.CSS("#oidc-login")))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".user-email").length`)); err != nil || n != 0 {
		t.Fatalf("after logout the page still shows a user (%d, %v)", n, err)
	}
}

// createKey creates a runs:read key on the settings page and returns the
// secret the page shows once.
func createKey(t *testing.T, ctx context.Context) string {
	t.Helper()
	run(t, ctx, "open API keys", chromedp.Click(chromedp.CSS(`nav.main-nav a[href$="/settings"]`)),
		chromedp.Click(chromedp.CSS(`nav.tabs a[href$="/settings/keys"]`)),
		chromedp.WaitVisible(chromedp.CSS("#create-key")))
	run(t, ctx, "create a key", chromedp.SendKeys(chromedp.CSS("#key-name"), "e2e"),
		chromedp.Click(chromedp.CSS(`input[name="scope"][value="runs:read"]`)),
		chromedp.Click(chromedp.CSS("#create-key")),
		chromedp.WaitVisible(chromedp.CSS("#new-key")))
	secret := text(t, ctx, "#new-key")
	if !strings.HasPrefix(secret, "dk_") {
		t.Fatalf("the page shows %q as the new key", secret)
	}
	// Its copy button copies it, or selects it where the clipboard is
	// refused (a headless browser without the permission).
	run(t, ctx, "copy the key", chromedp.Click(chromedp.CSS(`button[data-copy="new-key"]`), chromedp.NodeVisible))
	waitFor(t, ctx, "the copy button to answer", `document.querySelector('button[data-copy="new-key"]').textContent !== "Copy"`)
	return secret
}

type whoamiBody struct {
	KeyID   string   `json:"key_id"`
	KeyName string   `json:"key_name"`
	Scopes  []string `json:"scopes"`
}

func whoami(t *testing.T, base, key string, want int) whoamiBody {
	t.Helper()
	code, body := get(t, base+"/api/v1/whoami", key)
	if code != want {
		t.Fatalf("whoami = %d %s, want %d", code, body, want)
	}
	var w whoamiBody
	_ = json.Unmarshal([]byte(body), &w)
	return w
}

// TestDevLoginInChromium: dev without OIDC settings offers the marked dev
// login, which signs in as the dev tenant's owner.
func TestDevLoginInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	run(t, ctx, "dev login", chromedp.Navigate(p.BaseURL+"/login"),
		chromedp.WaitVisible(chromedp.CSS(".dev-banner")),
		chromedp.Click(chromedp.CSS("#dev-login")),
		chromedp.WaitVisible(chromedp.CSS(".user-email")))
	if got := text(t, ctx, ".role"); got != "owner" {
		t.Errorf("dev user's role = %q, want owner", got)
	}
	if got := text(t, ctx, ".dev-banner"); !strings.Contains(got, "Development login") {
		t.Errorf("banner = %q", got)
	}
	// The menus open from the keyboard.
	run(t, ctx, "open the user menu with Enter", chromedp.SendKeys(chromedp.CSS(".user-menu summary"), kb.Enter),
		chromedp.WaitVisible(chromedp.CSS("button.logout")))
}
