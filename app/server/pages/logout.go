package pages

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/login"
	"github.com/ductor/ductor/app/store"
)

// handleLogout ends the session, then ends the provider's session too
// when the provider offers RP-initiated logout.
func handleLogout(s *store.Store, lp *login.Provider, baseURL string) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, ok := httpx.SessionOf(c)
		if ok {
			if err := s.SessionDelete(c.Request().Context(), sess.Token); err != nil {
				return err
			}
		}
		httpx.ClearCookie(c, httpx.SessionCookie)
		if ok && lp != nil {
			if u := lp.LogoutURL(sess.IDToken, publicURL(c, baseURL)+"/login"); u != "" {
				return c.Redirect(http.StatusSeeOther, u)
			}
		}
		return c.Redirect(http.StatusSeeOther, "/login")
	}
}

// publicURL is DUCTOR_BASE_URL, or what the request says when it is unset.
func publicURL(c echo.Context, baseURL string) string {
	if baseURL != "" {
		return baseURL
	}
	return c.Scheme() + "://" + c.Request().Host
}
