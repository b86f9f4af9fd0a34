package api

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// handleBatchCreate starts a bulk cancel or retry of the runs a filter
// matches (those created so far) or of a list of run ids: 202 with the
// batch, which the sweep works in the background.
func handleBatchCreate(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req httpx.BatchRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		b, err := httpx.NewBatch(c.Request().Context(), s, httpx.TenantOf(c), req, actorOf(c))
		if err != nil {
			return err
		}
		if dry, err := dryRun(c); err != nil || dry {
			if err != nil {
				return err
			}
			return batchDryRun(c, rs, b)
		}
		if b, err = rs.Batches.Create(c.Request().Context(), b); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, httpx.BatchJSONOf(b))
	}
}

// handleBatchGet shows a batch's progress.
func handleBatchGet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "batch")
		if err != nil {
			return err
		}
		b, err := s.BatchGet(c.Request().Context(), httpx.TenantOf(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, httpx.BatchJSONOf(b))
	}
}

// handleBatchStop stops a running batch where it stands: 200 with the
// batch, its counts those of the runs acted on; the runs it had not
// reached are left as they are. A batch that has ended answers 409.
func handleBatchStop(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "batch")
		if err != nil {
			return err
		}
		b, err := rs.Batches.Stop(c.Request().Context(), httpx.TenantOf(c), id, actorOf(c))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, httpx.BatchJSONOf(b))
	}
}
