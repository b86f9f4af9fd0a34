package pages

import (
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

// handleDevLogin signs in as the dev user, without a password. It exists
// only when `ductor dev` runs on a loopback address without OIDC settings
// (site.DevLogin); everywhere else it is NotFound.
func handleDevLogin(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !httpx.SiteOf(c).DevLogin {
			return apperr.New(apperr.NotFound, "page not found")
		}
		user, err := s.UserLogin(c.Request().Context(), store.Identity{
			Issuer: "ductor-dev", Subject: "dev", Email: store.DevUserEmail, Name: "Dev user",
		})
		if err != nil {
			return err
		}
		return startSession(c, s, user, "", c.FormValue("next"))
	}
}
