package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/workers"
)

// handleCaseList lists the tenant's human-loop cases; ?status= filters.
func handleCaseList(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, err := limitParam(c)
		if err != nil {
			return err
		}
		list, err := s.CaseList(c.Request().Context(), tenantOf(c), store.CaseFilter{Status: c.QueryParam("status"), Limit: limit})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"cases": list})
	}
}

type caseRequest struct {
	Status *string `json:"status"`
	Data   any     `json:"data"` // null or absent: unchanged
}

// handleCaseUpdate changes a case's status and data: 200 with the case;
// 422 when data breaks the case's fields schema; 409 once closed.
func handleCaseUpdate(runs *workers.Coordinator) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := pathUUID(c, "id", "case")
		if err != nil {
			return err
		}
		var req caseRequest
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		ch := workers.CaseChange{Status: req.Status, Data: req.Data}
		out, err := runs.UpdateCase(c.Request().Context(), tenantOf(c), id, ch)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, out)
	}
}
