package pages

import (
	"context"
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
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
		d := views.GeneralData{Tabs: settingsTabs(c, "general"), Tenant: tenant, CanTier: v.Can(auth.PermTierManage)}
		if d.CanTier {
			if d.Tiers, err = tiersWithin(c.Request().Context(), s, tenant.Tier); err != nil {
				return err
			}
		}
		return httpx.Render(c, http.StatusOK, views.GeneralPage(shellFor(c, "Settings", "settings"), d))
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
			before, err := tx.TenantGetByID(c.Request().Context(), v.Tenant.ID)
			if err != nil {
				return err
			}
			if _, err := tx.TenantSetTier(c.Request().Context(), v.Tenant.ID, tier); err != nil {
				return err
			}
			if err := tierWithin(c.Request().Context(), tx, before.Tier, tier); err != nil {
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

// tierWithin refuses a move to a tier that lifts one of the current
// tier's quotas: a tenant's owner cannot raise its own limits; an
// operator does, with ductor tenant set --tier.
func tierWithin(ctx context.Context, s *store.Store, from, to store.Tier) error {
	quotas, err := s.UsageTierQuotas(ctx)
	if err != nil {
		return err
	}
	if q := store.TierQuota(quotas, to).Raises(store.TierQuota(quotas, from)); q != "" && from != to {
		return apperr.New(apperr.Forbidden, "tier %s has a higher %s quota than %s: an operator moves a tenant to it", to, q, from)
	}
	return nil
}

// tiersWithin lists the tiers a tenant on from may move itself to.
func tiersWithin(ctx context.Context, s *store.Store, from store.Tier) ([]store.TierInfo, error) {
	tiers, err := s.TierList(ctx)
	if err != nil {
		return nil, err
	}
	quotas, err := s.UsageTierQuotas(ctx)
	if err != nil {
		return nil, err
	}
	out := tiers[:0]
	for _, t := range tiers {
		if t.Name == from || store.TierQuota(quotas, t.Name).Raises(store.TierQuota(quotas, from)) == "" {
			out = append(out, t)
		}
	}
	return out, nil
}
