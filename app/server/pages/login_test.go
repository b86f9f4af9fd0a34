package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/oauth2-proxy/mockoidc"
)

// startLogin follows /login/oidc to the provider and stops at the
// provider's redirect back: the callback URL the browser would open.
func (b webBundle) startLogin(t *testing.T, br *servertest.Browser) *url.URL {
	t.Helper()
	a := br.Get(b.Server.URL + "/login/oidc?next=/t/x/runs")
	if a.Status != http.StatusFound || !strings.HasPrefix(a.Location, b.oidc.AuthorizationEndpoint()) {
		t.Fatalf("GET /login/oidc = %d to %q", a.Status, a.Location)
	}
	auth, _ := url.Parse(a.Location)
	q := auth.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") == "" {
		t.Fatalf("authorization request lacks PKCE S256, nonce or state: %s", a.Location)
	}
	a = br.Get(a.Location)
	cb, err := url.Parse(a.Location)
	if a.Status != http.StatusFound || err != nil || cb.Path != "/auth/callback" {
		t.Fatalf("provider answered %d to %q", a.Status, a.Location)
	}
	return cb
}

func (b webBundle) assertNoSession(t *testing.T, br *servertest.Browser, a servertest.Answer, want int) {
	t.Helper()
	if a.Status != want {
		t.Errorf("callback = %d, want %d: %s", a.Status, want, a.Body)
	}
	if br.Cookie(b.Server.URL, httpx.SessionCookie) != "" {
		t.Errorf("the browser got a session cookie")
	}
	if n := b.sessions(t); n != 0 {
		t.Errorf("%d sessions exist, want none", n)
	}
}

func TestOIDCLoginCreatesUserAndSession(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{})
	b.oidc.QueueUser(&mockoidc.MockUser{Subject: "s-1", Email: "Alice@Example.com", EmailVerified: true})
	br := servertest.NewBrowserClient(t)
	a := br.Get(b.startLogin(t, br).String())
	if a.Status != http.StatusSeeOther || a.Location != "/t/x/runs" {
		t.Fatalf("callback = %d to %q, want 303 to the page asked for", a.Status, a.Location)
	}
	set := strings.Join(a.Header.Values("Set-Cookie"), "\n")
	if !strings.Contains(set, httpx.SessionCookie+"=") || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") {
		t.Fatalf("session cookie attributes: %s", set)
	}
	if strings.Contains(set, "Secure") {
		t.Errorf("cookie is Secure on plain http: %s", set)
	}
	if page := br.Get(b.Server.URL + "/"); !strings.Contains(page.Body, "alice@example.com") {
		t.Fatalf("home after login (%d) does not show the user: %s", page.Status, page.Body)
	}
	var token string
	if err := b.Pool.QueryRow(context.Background(), "SELECT encode(token_hash, 'hex') FROM web_session").Scan(&token); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(token, br.Cookie(b.Server.URL, httpx.SessionCookie)) {
		t.Fatalf("the session token is stored in clear")
	}
}

// Logging in again in the same browser ends the old session: the id
// rotates at login.
func TestLoginRotatesTheSession(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{})
	br := servertest.NewBrowserClient(t)
	br.Get(b.startLogin(t, br).String())
	first := br.Cookie(b.Server.URL, httpx.SessionCookie)
	br.Get(b.startLogin(t, br).String())
	second := br.Cookie(b.Server.URL, httpx.SessionCookie)
	if first == "" || second == "" || first == second {
		t.Fatalf("session tokens %q then %q, want two different ones", first, second)
	}
	if _, err := b.Store.SessionGet(context.Background(), first); err == nil {
		t.Fatalf("the first session still works after the second login")
	}
	if n := b.sessions(t); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
}

func TestLoginWithTamperedStateFails(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{})
	br := servertest.NewBrowserClient(t)
	cb := b.startLogin(t, br)
	q := cb.Query()
	q.Set("state", q.Get("state")+"x")
	cb.RawQuery = q.Encode()
	b.assertNoSession(t, br, br.Get(cb.String()), http.StatusUnauthorized)
}

func TestLoginWithReplayedCodeFails(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{})
	victim := servertest.NewBrowserClient(t)
	cb := b.startLogin(t, victim)
	if a := victim.Get(cb.String()); a.Status != http.StatusSeeOther {
		t.Fatalf("first use of the code = %d", a.Status)
	}
	// The same callback again: the login attempt was used up.
	again := victim.Get(cb.String())
	if again.Status != http.StatusUnauthorized {
		t.Errorf("replayed callback = %d, want 401", again.Status)
	}
	// Another browser with its own attempt and the used code: the provider
	// refuses the code, and the state does not match either.
	attacker := servertest.NewBrowserClient(t)
	own := b.startLogin(t, attacker)
	q := own.Query()
	q.Set("code", cb.Query().Get("code"))
	own.RawQuery = q.Encode()
	a := attacker.Get(own.String())
	if a.Status != http.StatusUnauthorized || attacker.Cookie(b.Server.URL, httpx.SessionCookie) != "" {
		t.Errorf("replayed code in another browser = %d", a.Status)
	}
	if n := b.sessions(t); n != 1 {
		t.Errorf("%d sessions, want only the victim's", n)
	}
}

func TestLoginWithWrongNonceFails(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{})
	b.forgeNonce.Store(true)
	br := servertest.NewBrowserClient(t)
	a := br.Get(b.startLogin(t, br).String())
	b.assertNoSession(t, br, a, http.StatusUnauthorized)
	if !strings.Contains(a.Body, "nonce") {
		t.Errorf("refused for another reason than the nonce: %s", a.Body)
	}
}

func TestLoginWithoutVerifierFails(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{})
	b.dropVerifier.Store(true)
	br := servertest.NewBrowserClient(t)
	b.assertNoSession(t, br, br.Get(b.startLogin(t, br).String()), http.StatusUnauthorized)
}

func TestCallbackWithoutLoginCookieFails(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{})
	br := servertest.NewBrowserClient(t)
	cb := b.startLogin(t, br)
	stranger := servertest.NewBrowserClient(t)
	b.assertNoSession(t, stranger, stranger.Get(cb.String()), http.StatusUnauthorized)
}

func TestLoginRefusesUnverifiedEmail(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{})
	b.oidc.QueueUser(&mockoidc.MockUser{Subject: "s-2", Email: "eve@example.com", EmailVerified: false})
	br := servertest.NewBrowserClient(t)
	b.assertNoSession(t, br, br.Get(b.startLogin(t, br).String()), http.StatusUnauthorized)
}

func TestLogoutEndsTheSessionAtTheProvider(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{endSession: true})
	br := servertest.NewBrowserClient(t)
	br.Get(b.startLogin(t, br).String())
	token := br.Cookie(b.Server.URL, httpx.SessionCookie)
	sess, err := b.Store.SessionGet(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	a := br.Post(b.Server.URL+"/logout", url.Values{"csrf": {sess.CSRFToken}}, nil)
	if a.Status != http.StatusSeeOther || !strings.HasPrefix(a.Location, b.oidc.Addr()+"/oidc/logout?") ||
		!strings.Contains(a.Location, "id_token_hint=") {
		t.Fatalf("logout = %d to %q, want the provider's end_session_endpoint", a.Status, a.Location)
	}
	if _, err := b.Store.SessionGet(context.Background(), token); err == nil || b.sessions(t) != 0 {
		t.Fatalf("the session survived logout")
	}
}

func TestDevLoginOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	for _, enabled := range []bool{false, true} {
		b := setupWeb(t, webOpts{devLogin: enabled})
		br := servertest.NewBrowserClient(t)
		page := br.Get(b.Server.URL + "/login")
		if got := strings.Contains(page.Body, "Development login"); got != enabled {
			t.Errorf("dev login %v: banner shown = %v", enabled, got)
		}
		a := br.Post(b.Server.URL+"/login/dev", url.Values{"csrf": {br.Cookie(b.Server.URL, httpx.PreSessionCookie)}}, nil)
		want := map[bool]int{false: http.StatusNotFound, true: http.StatusSeeOther}[enabled]
		if a.Status != want {
			t.Errorf("dev login %v: POST /login/dev = %d, want %d", enabled, a.Status, want)
		}
		if enabled && br.Cookie(b.Server.URL, httpx.SessionCookie) == "" {
			t.Errorf("dev login gave no session")
		}
	}
}
