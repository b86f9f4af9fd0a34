package pages

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/login"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleLoginPage offers the ways to sign in; a signed-in person goes on.
func handleLoginPage(lp *login.Provider) echo.HandlerFunc {
	return func(c echo.Context) error {
		next := httpx.SafeNext(c.QueryParam("next"))
		if _, ok := httpx.SessionOf(c); ok {
			return c.Redirect(http.StatusSeeOther, next)
		}
		return httpx.Render(c, http.StatusOK, views.LoginPage(views.LoginData{
			OIDC: lp != nil, DevLogin: httpx.SiteOf(c).DevLogin, DevEmail: store.DevUserEmail,
			Next: next, CSRF: httpx.CSRFToken(c),
		}))
	}
}

// startSession logs the browser in as the user: a new session, a new
// token (any session the browser had is ended: the id rotates at login).
func startSession(c echo.Context, s *store.Store, user store.User, idToken, next string) error {
	ctx := c.Request().Context()
	if old, err := c.Cookie(httpx.SessionCookie); err == nil && old.Value != "" {
		if err := s.SessionDelete(ctx, old.Value); err != nil {
			return err
		}
	}
	token, err := s.SessionCreate(ctx, user.ID, idToken)
	if err != nil {
		return err
	}
	httpx.SetCookie(c, httpx.SessionCookie, token, int(store.SessionTTL.Seconds()))
	httpx.ClearCookie(c, httpx.PreSessionCookie)
	return c.Redirect(http.StatusSeeOther, httpx.SafeNext(next))
}
