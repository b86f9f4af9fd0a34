package server

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

const (
	defaultPage = 50
	maxPage     = 500
)

// handleRunList lists runs newest first with the list's filters (see
// RunQuery), paged by opaque cursors (next_cursor older, prev_cursor
// newer), as summaries (see RunSummaryJSON); ?count=true adds the total,
// counted up to 1,000 and estimated by the planner past that
// (total_estimated).
func handleRunList(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		rq, err := runQueryOf(c.QueryParams())
		if err != nil {
			return err
		}
		f, err := rq.filter(ctx, s, tenantOf(c))
		if err != nil {
			return err
		}
		include, err := includeParam(c)
		if err != nil {
			return err
		}
		limit, err := limitParam(c)
		if err != nil {
			return err
		}
		cur, err := cursorParam(c.QueryParam("cursor"))
		if err != nil {
			return err
		}
		page, err := loadRunPage(ctx, s, tenantOf(c), f, cur, limit)
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
			n, estimated, err := runTotal(ctx, s, tenantOf(c), f)
			if err != nil {
				return err
			}
			resp["total"], resp["total_estimated"] = n, estimated
		}
		if include["output"] || include["input"] {
			if page.Runs, err = guardRuns(c, s, page.Runs); err != nil {
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

func limitParam(c echo.Context) (int, error) {
	v := c.QueryParam("limit")
	if v == "" {
		return defaultPage, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPage {
		return 0, apperr.New(apperr.Invalid, "limit must be between 1 and %d", maxPage)
	}
	return n, nil
}

// pageParams reads after (a sequence number) and limit.
func pageParams(c echo.Context) (int64, int, error) {
	limit, err := limitParam(c)
	if err != nil {
		return 0, 0, err
	}
	v := c.QueryParam("after")
	if v == "" {
		return 0, limit, nil
	}
	after, err := strconv.ParseInt(v, 10, 64)
	if err != nil || after < 0 {
		return 0, 0, apperr.New(apperr.Invalid, "after must be a sequence number")
	}
	return after, limit, nil
}
