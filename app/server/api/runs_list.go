package api

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
)

// handleRunList lists runs newest first with the list's filters (see
// RunQuery), paged by opaque cursors (next_cursor older, prev_cursor
// newer), as summaries (see RunSummaryJSON); ?count=true adds the total,
// counted up to 1,000 and estimated by the planner past that
// (total_estimated).
func handleRunList(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		rq, err := httpx.RunQueryOf(c.QueryParams())
		if err != nil {
			return err
		}
		f, err := rq.Filter(ctx, s, httpx.TenantOf(c))
		if err != nil {
			return err
		}
		include, err := includeParam(c)
		if err != nil {
			return err
		}
		limit, err := httpx.LimitParam(c)
		if err != nil {
			return err
		}
		cur, err := httpx.CursorParam(c.QueryParam("cursor"))
		if err != nil {
			return err
		}
		page, err := httpx.LoadRunPage(ctx, s, httpx.TenantOf(c), f, cur, limit)
		if err != nil {
			return err
		}
		resp := map[string]any{}
		if page.Next != "" {
			resp["next_cursor"] = page.Next
		}
		if page.Prev != "" {
			resp["prev_cursor"] = page.Prev
		}
		if c.QueryParam("count") == "true" {
			n, estimated, err := httpx.RunTotal(ctx, s, httpx.TenantOf(c), f)
			if err != nil {
				return err
			}
			resp["total"], resp["total_estimated"] = n, estimated
		}
		if include["output"] || include["input"] {
			if page.Runs, err = httpx.GuardRuns(c, s, page.Runs); err != nil {
				return err
			}
		}
		out := make([]RunSummaryJSON, len(page.Runs))
		for i, r := range page.Runs {
			out[i] = runSummary(r, include)
		}
		resp["runs"] = out
		return c.JSON(http.StatusOK, resp)
	}
}
