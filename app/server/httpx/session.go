package httpx

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

// Cookie names. The session cookie carries a random token whose hash keys
// the web_session row; the login cookie does the same for a login in
// flight; the pre-session cookie is the CSRF token of forms shown before
// login (the dev login).
const (
	SessionCookie    = "ductor_session"
	LoginCookie      = "ductor_login"
	PreSessionCookie = "ductor_csrf"
)

const (
	sessionKey = "ductor.session"
	siteKey    = "ductor.site"
)

// Site is what every dashboard page may need to know about the process.
type Site struct {
	DevLogin      bool // offer the clearly marked dev login
	SecureCookies bool // the dashboard is served over https
}

// WebSession is the logged-in browser of a request.
type WebSession struct {
	store.Session
	Token string
}

// SessionOf is the request's dashboard session, if signed in.
func SessionOf(c echo.Context) (WebSession, bool) {
	s, ok := c.Get(sessionKey).(WebSession)
	return s, ok
}

// SiteOf is how the dashboard is served (see Site).
func SiteOf(c echo.Context) Site {
	s, _ := c.Get(siteKey).(Site)
	return s
}

// LoadSession attaches the request's live session, if any. A cookie that
// names no live session is cleared.
func LoadSession(s *store.Store, st Site) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Set(siteKey, st)
			ck, err := c.Cookie(SessionCookie)
			if err != nil || ck.Value == "" {
				return next(c)
			}
			sess, err := s.SessionGet(c.Request().Context(), ck.Value)
			switch {
			case err == nil:
				c.Set(sessionKey, WebSession{Session: sess, Token: ck.Value})
			case apperr.Is(err, apperr.Unauthorized):
				ClearCookie(c, SessionCookie)
			default:
				return err
			}
			return next(c)
		}
	}
}

// RequireLogin sends a browser without a session to the login page, and
// refuses other requests.
func RequireLogin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, ok := SessionOf(c); ok {
			return next(c)
		}
		r := c.Request()
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(r.URL.RequestURI()))
		}
		return apperr.New(apperr.Unauthorized, "not logged in")
	}
}

// SetCookie sets an HttpOnly, SameSite=Lax cookie, Secure on https.
func SetCookie(c echo.Context, name, value string, maxAge int) {
	c.SetCookie(&http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: SiteOf(c).SecureCookies,
	})
}

// ClearCookie removes a cookie.
func ClearCookie(c echo.Context, name string) { SetCookie(c, name, "", -1) }

// SafeNext keeps a post-login destination on this site: an absolute path
// of this site once normalised the way browsers normalise a Location
// (control characters, which they strip, removed first), with no scheme,
// no host, no `//` or `\` that a browser could read as one; anything else
// is "/".
func SafeNext(next string) string {
	next = strings.Map(dropControl, next)
	if len(next) > maxNext || !strings.HasPrefix(next, "/") ||
		strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	return next
}

// maxNext bounds a post-login destination.
const maxNext = 2048

// dropControl removes C0 and C1 control characters and DEL.
func dropControl(r rune) rune {
	if r < 0x20 || r >= 0x7f && r <= 0x9f {
		return -1
	}
	return r
}
