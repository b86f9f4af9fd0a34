package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleSettings shows the tenant and, to owners, the tier form.
func handleSettings() echo.HandlerFunc {
	return func(c echo.Context) error {
		v := viewerOf(c)
		return render(c, http.StatusOK, views.GeneralPage(shellFor(c, "Settings", "settings"), views.GeneralData{
			Tabs: settingsTabs(c, "general"), Tenant: v.Tenant, CanTier: v.Can(auth.PermTierManage),
		}))
	}
}

// handleTierSet changes the tenant's tier and audits it.
func handleTierSet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := viewerOf(c)
		tier, err := store.ParseTier(c.FormValue("tier"))
		if err != nil {
			return err
		}
		err = s.InTx(c.Request().Context(), func(tx *store.Store) error {
			if _, err := tx.TenantSetTier(c.Request().Context(), v.Tenant.ID, tier); err != nil {
				return err
			}
			return tx.AuditRecord(c.Request().Context(), v.Tenant.ID, v.Actor(), store.AuditTierChange, v.Tenant.Slug,
				map[string]any{"from": v.Tenant.Tier, "to": tier})
		})
		if err != nil {
			return err
		}
		return seeOther(c, "/settings")
	}
}
