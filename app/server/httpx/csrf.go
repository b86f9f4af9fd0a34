package httpx

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
)

// csrfField is the form field of the body (and CSRFHeader the header)
// that carries the CSRF token; a token in the query string is not read.
const (
	csrfField  = "csrf"
	CSRFHeader = "X-CSRF-Token"
)

// CSRFProtect refuses state-changing requests that come from another
// Site, by two independent checks: Fetch Metadata (Sec-Fetch-Site, or
// Origin from browsers that send no Fetch Metadata) and a token bound to
// the session (or, before login, to the pre-session cookie).
func CSRFProtect(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if IsSafeMethod(c.Request().Method) {
			return next(c)
		}
		if !sameOrigin(c.Request()) {
			return apperr.New(apperr.Forbidden, "cross-site request refused")
		}
		sent := c.Request().Header.Get(CSRFHeader)
		if sent == "" {
			sent = c.Request().PostFormValue(csrfField) // the body only: a URL is logged, kept and shared
		}
		if !auth.TokensEqual(sent, expectedCSRF(c)) {
			return apperr.New(apperr.Forbidden, "missing or stale form token: reload the page and try again")
		}
		return next(c)
	}
}

// IsSafeMethod reports whether a request with method m changes nothing,
// so needs no CSRF check.
func IsSafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sameOrigin reads Fetch Metadata: only same-origin requests and ones the
// user typed (none) pass. Without it, an Origin header must name this host.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser, or one too old to say: the token decides
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// expectedCSRF is the token forms of this request's browser carry.
func expectedCSRF(c echo.Context) string {
	if s, ok := SessionOf(c); ok {
		return s.CSRFToken
	}
	if ck, err := c.Cookie(PreSessionCookie); err == nil {
		return ck.Value
	}
	return ""
}

// CSRFToken is the token to put in this request's forms, creating the
// pre-session cookie for a browser that is not logged in.
func CSRFToken(c echo.Context) string {
	if t := expectedCSRF(c); t != "" {
		return t
	}
	if t, ok := c.Get(PreSessionCookie).(string); ok {
		return t
	}
	t := auth.NewToken()
	SetCookie(c, PreSessionCookie, t, 0)
	c.Set(PreSessionCookie, t)
	return t
}
