package pages

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/login"
	"github.com/ductor/ductor/app/store"
)

// handleLoginStart sends the browser to the identity provider. What the
// callback must check (state, nonce, PKCE verifier) is stored server-side
// under the hash of a token in a short-lived cookie.
func handleLoginStart(s *store.Store, lp *login.Provider) echo.HandlerFunc {
	return func(c echo.Context) error {
		if lp == nil {
			return apperr.New(apperr.NotFound, "OIDC login is not configured")
		}
		u, a := lp.Begin()
		token := auth.NewToken()
		err := s.LoginAttemptCreate(c.Request().Context(), token, store.LoginAttempt{
			State: a.State, Nonce: a.Nonce, Verifier: a.Verifier, ReturnTo: httpx.SafeNext(c.QueryParam("next")),
		})
		if err != nil {
			return err
		}
		httpx.SetCookie(c, httpx.LoginCookie, token, int(store.LoginTTL.Seconds()))
		return c.Redirect(http.StatusFound, u)
	}
}

// handleLoginCallback finishes a login: the attempt is taken (used once
// whatever happens), the state, code, verifier and nonce are checked, the
// user is created at their first login, and a new session starts.
func handleLoginCallback(s *store.Store, lp *login.Provider) echo.HandlerFunc {
	return func(c echo.Context) error {
		if lp == nil {
			return apperr.New(apperr.NotFound, "OIDC login is not configured")
		}
		ck, err := c.Cookie(httpx.LoginCookie)
		if err != nil || ck.Value == "" {
			return apperr.New(apperr.Unauthorized, "no login in progress: start again")
		}
		httpx.ClearCookie(c, httpx.LoginCookie)
		ctx := c.Request().Context()
		stored, err := s.LoginAttemptTake(ctx, ck.Value)
		if err != nil {
			return err
		}
		if e := c.QueryParam("error"); e != "" {
			return apperr.New(apperr.Unauthorized, "the identity provider refused the login: %s", e)
		}
		a := login.Attempt{State: stored.State, Nonce: stored.Nonce, Verifier: stored.Verifier}
		id, idToken, err := lp.Finish(ctx, a, c.QueryParam("state"), c.QueryParam("code"))
		if err != nil {
			return err
		}
		user, err := s.UserLogin(ctx, id)
		if err != nil {
			return err
		}
		return startSession(c, s, user, idToken, stored.ReturnTo)
	}
}
