package api

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// handleScatterChildren pages through a scatter's children in item order,
// with their counts by state: ?after=INDEX&limit=N (default 50, at most
// 500), so a 10,000-way fan-out stays usable; ?state= keeps the children
// in one state and ?q= those whose key contains the text.
func handleScatterChildren(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		run, err := loadRun(c, s)
		if err != nil {
			return err
		}
		scatter := c.Param("node")
		after, limit, err := childPage(c)
		if err != nil {
			return err
		}
		m, err := rs.Manifest(ctx, run)
		if err != nil {
			return err
		}
		types := map[string]definition.StepType{}
		for _, st := range m.Steps {
			types[st.Ref] = st.Type
		}
		if _, ok := types[scatter]; !ok {
			return apperr.New(apperr.NotFound, "run has no step %q", scatter)
		}
		counts, err := s.RunChildNodeCounts(ctx, run.TenantID, run.ID, scatter)
		if err != nil {
			return err
		}
		state, err := httpx.ChildStateParam(c.QueryParam("state"))
		if err != nil {
			return err
		}
		nodes, err := s.RunNodesChildrenFiltered(ctx, run.TenantID, run.ID, store.ChildFilter{
			Scatter: scatter, After: after, State: state, Key: c.QueryParam("q"), Limit: limit,
		})
		if err != nil {
			return err
		}
		g, err := httpx.GuardFor(c, s, run)
		if err != nil {
			return err
		}
		nodes = g.Nodes(nodes)
		waits, err := httpx.WorkerWaits(ctx, s, run, nodes)
		if err != nil {
			return err
		}
		slots, err := httpx.SlotWaits(ctx, s, run, nodes)
		if err != nil {
			return err
		}
		out := make([]NodeJSON, len(nodes))
		for i, n := range nodes {
			out[i] = nodeJSON(n, types)
			out[i].WaitingForWorker = workerWaitJSON(waits[n.ID])
			if w := slots[n.ID]; w != nil {
				out[i].WaitingForSlot = &SlotWaitJSON{Key: w.Key, Limit: w.Limit}
			}
		}
		if out, err = withAttempts(ctx, s, run.TenantID, run.ID, out); err != nil {
			return err
		}
		resp := map[string]any{"children": out, "counts": counts}
		if len(nodes) == limit {
			resp["next_after"] = nodes[len(nodes)-1].Child.Index
		}
		return c.JSON(http.StatusOK, resp)
	}
}

// childPage reads ?after= (a child index, -1 for the first page, as a
// 64-bit cursor: past the last child the page is empty) and ?limit=
// (1 to 500): not an integer is 400, out of range 422.
func childPage(c echo.Context) (after int64, limit int, err error) {
	n, err := pageNumber(c, "limit", httpx.DefaultPage, 1, httpx.MaxPage)
	if err != nil {
		return 0, 0, err
	}
	after, err = pageNumber(c, "after", -1, -1, math.MaxInt64)
	if err != nil {
		return 0, 0, err
	}
	return after, int(n), nil
}

// pageNumber reads the integer query parameter name, def when absent.
func pageNumber(c echo.Context, name string, def, lo, hi int64) (int64, error) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	var num *strconv.NumError
	switch {
	case errors.As(err, &num) && num.Err == strconv.ErrRange, err == nil && (n < lo || n > hi):
		return 0, apperr.New(apperr.Unprocessable, "%s must be from %d to %d", name, lo, hi)
	case err != nil:
		return 0, apperr.New(apperr.Invalid, "%s must be an integer", name)
	}
	return n, nil
}
