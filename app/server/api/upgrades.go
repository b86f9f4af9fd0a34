package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
)

// dryRun reads the dry_run query parameter.
func dryRun(c echo.Context) (bool, error) {
	v := c.QueryParam("dry_run")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apperr.New(apperr.Invalid, "dry_run must be true or false, not %q", v)
	}
	return b, nil
}

// handleRunUpgrade plans moving a run to another version, and, unless
// dry_run, does it: 200 with the plan, 422 with the plan's refusals
// (details) when it cannot be done safely.
func handleRunUpgrade(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Version       int  `json:"version"`
			CancelRemoved bool `json:"cancel_removed"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if req.Version < 1 {
			return apperr.New(apperr.Invalid, "version is required: the published version to upgrade the run to")
		}
		res, _, err := planUpgrade(c, rs, runs.UpgradeRequest{Version: req.Version, CancelRemoved: req.CancelRemoved})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, res)
	}
}

// handleRunRetry retries a failed run from a failed node, on the run's
// version or on another (version), planned like an upgrade; with
// dry_run it answers what would run again instead, flagging the
// side-effecting steps that already succeeded.
func handleRunRetry(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Node          string `json:"node"`
			Version       int    `json:"version"`
			CancelRemoved bool   `json:"cancel_removed"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if req.Node == "" {
			return apperr.New(apperr.Invalid, "node is required: the failed node to retry from")
		}
		return retryOnVersion(c, rs, req.Node, req.Version, req.CancelRemoved)
	}
}

func retryOnVersion(c echo.Context, rs *runs.Service, node string, version int, cancelRemoved bool) error {
	if version < 0 {
		return apperr.New(apperr.Invalid, "version must be a published version (or absent: the run's own)")
	}
	res, dry, err := planUpgrade(c, rs, runs.UpgradeRequest{Version: version, Retry: node, CancelRemoved: cancelRemoved})
	if err != nil {
		return err
	}
	if dry {
		return c.JSON(http.StatusOK, res)
	}
	return c.JSON(http.StatusAccepted, map[string]any{"status": "accepted", "upgrade": res})
}

// planUpgrade plans req on the request's run, for its tenant and key,
// and applies it unless the request is a dry run, which it reports.
func planUpgrade(c echo.Context, rs *runs.Service, req runs.UpgradeRequest) (runs.UpgradeResult, bool, error) {
	id, err := httpx.PathUUID(c, "id", "run")
	if err != nil {
		return runs.UpgradeResult{}, false, err
	}
	dry, err := dryRun(c)
	if err != nil {
		return runs.UpgradeResult{}, false, err
	}
	req.TenantID, req.RunID, req.DryRun, req.By = httpx.TenantOf(c), id, dry, actorOf(c)
	res, err := rs.Upgrades.Upgrade(c.Request().Context(), req)
	return res, dry, err
}

// batchDryRun answers an upgrade batch's dry run: how many of its runs
// each outcome would get, changing nothing.
func batchDryRun(c echo.Context, rs *runs.Service, b store.Batch) error {
	if b.Action != store.BatchUpgradeRuns {
		return apperr.New(apperr.Invalid, "dry_run is for an upgrade batch")
	}
	counts, err := rs.Upgrades.DryRun(c.Request().Context(), b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"action": b.Action, "dry_run": true, "version": b.Upgrade.Version, "counts": counts})
}
