package pages

import (
	"net/http"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/runs"
)

// handleTestRun starts a run of the definition's latest published version
// with the posted JSON input, and answers its id (script) or its page.
func handleTestRun(rs *runs.Service, validate runs.InputValidator) echo.HandlerFunc {
	return func(c echo.Context) error {
		if rs == nil {
			return apperr.New(apperr.Unavailable, "this server does not run workflows")
		}
		var input any = map[string]any{}
		if raw := strings.TrimSpace(c.FormValue("input")); raw != "" {
			decoded, err := jsonvalue.Decode([]byte(raw))
			if err != nil {
				return apperr.New(apperr.Invalid, "the input must be JSON: %v", err)
			}
			input = decoded
		}
		v := httpx.ViewerOf(c)
		run, _, err := rs.Start(c.Request().Context(), runs.Trigger{TenantID: v.Tenant.ID, Definition: c.Param("key"), Input: input}, validate)
		if err != nil {
			return err
		}
		if wantsJSON(c) {
			return c.JSON(http.StatusCreated, map[string]string{"id": run.ID.String()})
		}
		return seeOther(c, "/runs/"+run.ID.String())
	}
}
