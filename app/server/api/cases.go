package api

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// CaseSummaryJSON is a case as lists show it: without its data unless
// ?include=data asks for it, and then only up to MaxIncludedBytes (a
// larger one is left out and named in truncated, for GET /cases/{id} to
// fetch whole).
type CaseSummaryJSON struct {
	store.Case
	Data      any      `json:"data,omitempty"`
	Truncated []string `json:"truncated,omitempty"`
}

// handleCaseList lists the tenant's human-loop cases as summaries;
// ?status= filters, ?include=data adds each case's data.
func handleCaseList(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, err := httpx.LimitParam(c)
		if err != nil {
			return err
		}
		include, err := includeOf(c, []string{"data"})
		if err != nil {
			return err
		}
		list, err := s.CaseSummaries(c.Request().Context(), httpx.TenantOf(c), store.CaseSummaryFilter{
			Status: c.QueryParam("status"), Limit: limit, WithData: include["data"], MaxDataBytes: MaxIncludedBytes,
		})
		if err != nil {
			return err
		}
		out := make([]CaseSummaryJSON, len(list))
		for i, k := range list {
			out[i] = CaseSummaryJSON{Case: k.Case, Data: k.Data}
			if k.DataLeftOut {
				out[i].Truncated = []string{"data"}
			}
		}
		return c.JSON(http.StatusOK, map[string]any{"cases": out})
	}
}

// handleCaseGet shows one case whole, its data included.
func handleCaseGet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "case")
		if err != nil {
			return err
		}
		k, err := s.CaseGet(c.Request().Context(), httpx.TenantOf(c), id)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, k)
	}
}

type caseRequest struct {
	Status *string `json:"status"`
	Data   any     `json:"data"` // null or absent: unchanged
}

// handleCaseUpdate changes a case's status and data: 200 with the case;
// 422 when data breaks the case's fields schema; 409 once closed.
func handleCaseUpdate(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "case")
		if err != nil {
			return err
		}
		var req caseRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		_, actor := httpx.RequestActor(c)
		ch := runs.CaseChange{Status: req.Status, Data: req.Data, Actor: actor}
		out, err := rs.UpdateCase(c.Request().Context(), httpx.TenantOf(c), id, ch)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, out)
	}
}
