package pages

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// upgradeBatch is the batch that upgrades the definition's runs to the
// page's version.
func upgradeBatch(c echo.Context, s *store.Store) (store.Batch, int, error) {
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 1 {
		return store.Batch{}, 0, apperr.New(apperr.NotFound, "no such version")
	}
	v := httpx.ViewerOf(c)
	if _, err := s.DefinitionVersionRef(c.Request().Context(), v.Tenant.ID, c.Param("key"), n); err != nil {
		return store.Batch{}, n, err
	}
	req := httpx.BatchRequest{Action: store.BatchUpgradeRuns, Version: n, Filter: &httpx.RunQuery{Definition: c.Param("key")}}
	b, err := httpx.NewBatch(c.Request().Context(), s, v.Tenant.ID, req, v.Actor())
	return b, n, err
}

// handleUpgradePage shows the dry run of upgrading the definition's runs
// to the version, with the button that does it.
func handleUpgradePage(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		b, n, err := upgradeBatch(c, s)
		if err != nil {
			return err
		}
		d := views.UpgradeData{Key: c.Param("key"), Version: n, CanOperate: httpx.ViewerOf(c).Can(auth.PermRunsOperate)}
		if d.Counts, err = rs.Upgrades.DryRun(c.Request().Context(), b); err != nil {
			if apperr.CodeOf(err) == apperr.Internal {
				return err
			}
			d.Error, d.CanOperate = err.Error(), false
		}
		return httpx.Render(c, 200, views.UpgradePage(shellFor(c, "Upgrade runs", "definitions"), d))
	}
}

// handleUpgradeForm starts the batch and shows its progress.
func handleUpgradeForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		b, _, err := upgradeBatch(c, s)
		if err == nil {
			b, err = rs.Batches.Create(c.Request().Context(), b)
		}
		if err != nil {
			return err
		}
		return seeOther(c, "/batches/"+b.ID.String())
	}
}
