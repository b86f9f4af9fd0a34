package pages

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleSettings shows the tenant and, to owners, the tier and retention
// forms.
func handleSettings(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		tenant, err := s.TenantGetByID(c.Request().Context(), v.Tenant.ID)
		if err != nil {
			return err
		}
		return httpx.Render(c, http.StatusOK, views.GeneralPage(shellFor(c, "Settings", "settings"), views.GeneralData{
			Tabs: settingsTabs(c, "general"), Tenant: tenant, CanTier: v.Can(auth.PermTierManage),
		}))
	}
}

// handleTierSet changes the tenant's tier and audits it.
func handleTierSet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
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

// handleRetentionSet changes how long the tenant's finished runs are kept
// and audits it.
func handleRetentionSet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		retention, err := store.ParseRetention(c.FormValue("retention"))
		if err != nil {
			return err
		}
		err = s.InTx(c.Request().Context(), func(tx *store.Store) error {
			old, err := tx.TenantGetByID(c.Request().Context(), v.Tenant.ID)
			if err != nil {
				return err
			}
			if _, err := tx.TenantSetRetention(c.Request().Context(), v.Tenant.ID, retention); err != nil {
				return err
			}
			return tx.AuditRecord(c.Request().Context(), v.Tenant.ID, v.Actor(), store.AuditRetentionChange, v.Tenant.Slug,
				map[string]any{"from": store.FormatRetention(old.Retention), "to": store.FormatRetention(retention)})
		})
		if err != nil {
			return err
		}
		return seeOther(c, "/settings")
	}
}
