package pages_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/httpx"
)

// The CSRF token counts only from the form's body or the X-CSRF-Token
// header; one in the query string (which is logged, kept in history and
// sent on in Referer) is refused.
func TestCSRFTokenInTheQueryIsRefused(t *testing.T) {
	t.Parallel()
	b := setupWeb(t, webOpts{devLogin: true})
	br := servertest.NewBrowserClient(t)
	br.Get(b.Server.URL + "/login")
	token := br.Cookie(b.Server.URL, httpx.PreSessionCookie)
	if token == "" {
		t.Fatal("the login page set no pre-session cookie")
	}
	a := br.Post(b.Server.URL+"/login/dev?"+url.Values{"csrf": {token}}.Encode(), url.Values{}, nil)
	if a.Status != http.StatusForbidden || br.Cookie(b.Server.URL, httpx.SessionCookie) != "" {
		t.Fatalf("dev login with the token in the query = %d, want 403 and no session", a.Status)
	}
	if a := br.Post(b.Server.URL+"/login/dev", url.Values{}, map[string]string{httpx.CSRFHeader: token}); a.Status != http.StatusSeeOther {
		t.Fatalf("dev login with the token in the header = %d, want 303", a.Status)
	}
	if br.Cookie(b.Server.URL, httpx.SessionCookie) == "" {
		t.Fatal("dev login gave no session")
	}
}
