package pages

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleHome sends a signed-in person to their first tenant, and shows
// everyone else the landing page.
func handleHome(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, ok := httpx.SessionOf(c)
		if !ok {
			return httpx.Render(c, http.StatusOK, views.Home())
		}
		ms, err := s.MembershipsOf(c.Request().Context(), sess.User.Email)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return httpx.Render(c, http.StatusOK, views.NoTenants(sess.User.Email, sess.CSRFToken, httpx.SiteOf(c).DevLogin))
		}
		return c.Redirect(http.StatusSeeOther, "/t/"+ms[0].Tenant.Slug+"/runs")
	}
}
