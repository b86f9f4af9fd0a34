package server

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/ductor/ductor/app/server/httpx"
)

// The CSRF token counts only from the form's body or the X-CSRF-Token
// header; one in the query string (which is logged, kept in history and
// sent on in Referer) is refused.
func TestCSRFTokenInTheQueryIsRefused(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{devLogin: true})
	br := newBrowserClient(t)
	br.get(b.srv.URL + "/login")
	token := br.cookie(b.srv.URL, httpx.PreSessionCookie)
	if token == "" {
		t.Fatal("the login page set no pre-session cookie")
	}
	a := br.post(b.srv.URL+"/login/dev?"+url.Values{"csrf": {token}}.Encode(), url.Values{}, nil)
	if a.status != http.StatusForbidden || br.cookie(b.srv.URL, httpx.SessionCookie) != "" {
		t.Fatalf("dev login with the token in the query = %d, want 403 and no session", a.status)
	}
	if a := br.post(b.srv.URL+"/login/dev", url.Values{}, map[string]string{httpx.CSRFHeader: token}); a.status != http.StatusSeeOther {
		t.Fatalf("dev login with the token in the header = %d, want 303", a.status)
	}
	if br.cookie(b.srv.URL, httpx.SessionCookie) == "" {
		t.Fatal("dev login gave no session")
	}
}
