package pages

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// auditPageSize is how many of the newest audit rows the page shows.
const auditPageSize = 200

// handleAudit shows the tenant's audit log to owners and admins.
func handleAudit(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		entries, err := s.AuditList(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, auditPageSize)
		if err != nil {
			return err
		}
		return httpx.Render(c, http.StatusOK, views.AuditPage(shellFor(c, "Audit log", "settings"), views.AuditData{
			Tabs: settingsTabs(c, "audit"), Entries: entries,
		}))
	}
}
