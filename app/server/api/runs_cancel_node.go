package api

import (
	"net/http"
	"unicode/utf8"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/runs"
)

// handleNodeCancel asks a run to cancel one running or waiting node:
// 202, or 409 when the run ended or the node has nothing to cancel.
func handleNodeCancel(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Reason string `json:"reason"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if utf8.RuneCountInString(req.Reason) > httpx.MaxReasonLength {
			return apperr.New(apperr.Invalid, "reason is longer than %d characters", httpx.MaxReasonLength)
		}
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		if err := rs.CancelNode(c.Request().Context(), httpx.TenantOf(c), id, c.Param("node"), req.Reason); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{"status": "accepted"})
	}
}
