package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

// handleRunJSON downloads one of a run's values whole, as JSON: its input
// or output (:part), or a node's output (/json/nodes/:node). Pages show
// only a bounded preview of each and link here.
func handleRunJSON(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), viewerOf(c)
		id, err := pathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		run, err := s.RunGet(ctx, v.Tenant.ID, id)
		if err != nil {
			return err
		}
		var value any
		name := c.Param("part")
		switch node := c.Param("node"); {
		case node != "":
			nodes, err := s.RunNodesByName(ctx, run.TenantID, run.ID, []string{node})
			if err != nil {
				return err
			}
			if len(nodes) == 0 {
				return apperr.New(apperr.NotFound, "run %s has no node %q", run.ID, node)
			}
			value, name = nodes[0].Output, "node-output"
		case name == "input":
			value = run.State.Input
		case name == "output":
			value = run.State.Output
		default:
			return apperr.New(apperr.NotFound, "a run has no value %q", name)
		}
		return sendJSONFile(c, fmt.Sprintf("run-%s-%s.json", run.ID, name), value)
	}
}

// sendJSONFile answers value as a JSON attachment.
func sendJSONFile(c echo.Context, filename string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filename, err)
	}
	h := c.Response().Header()
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, filename))
	h.Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, raw)
}
