package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleHome sends a signed-in person to their first tenant, and shows
// everyone else the landing page.
func handleHome(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, ok := sessionOf(c)
		if !ok {
			return render(c, http.StatusOK, views.Home())
		}
		ms, err := s.MembershipsOf(c.Request().Context(), sess.User.Email)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return render(c, http.StatusOK, views.NoTenants(sess.User.Email, sess.CSRFToken, siteOf(c).DevLogin))
		}
		return c.Redirect(http.StatusSeeOther, "/t/"+ms[0].Tenant.Slug+"/runs")
	}
}
