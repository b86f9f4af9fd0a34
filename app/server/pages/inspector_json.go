package pages

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
)

// handleRunJSON downloads one of a run's values whole, as JSON: its input
// or output (:part), or a node's output (/json/nodes/:node). Pages show
// only a bounded preview of each and link here.
func handleRunJSON(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		run, err := s.RunGet(ctx, v.Tenant.ID, id)
		if err != nil {
			return err
		}
		g, err := httpx.GuardFor(c, s, run)
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
			value, name = g.Node(node, nodes[0].Output), "node-output"
		case name == "input":
			value = g.Run(run).State.Input
		case name == "output":
			value = g.Run(run).State.Output
		default:
			return apperr.New(apperr.NotFound, "a run has no value %q", name)
		}
		return sendJSONFile(c, fmt.Sprintf("run-%s-%s.json", run.ID, name), value)
	}
}

// handleAttemptJSON downloads one attempt's output whole
// (/json/nodes/:node/attempts/:generation/:attempt).
func handleAttemptJSON(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		gen, err1 := strconv.Atoi(c.Param("generation"))
		n, err2 := strconv.Atoi(c.Param("attempt"))
		if err1 != nil || err2 != nil {
			return apperr.New(apperr.NotFound, "attempt not found")
		}
		node := c.Param("node")
		value, err := s.AttemptOutput(ctx, v.Tenant.ID, id, node, gen, n)
		if err != nil {
			return err
		}
		run, err := s.RunGet(ctx, v.Tenant.ID, id)
		if err != nil {
			return err
		}
		g, err := httpx.GuardFor(c, s, run)
		if err != nil {
			return err
		}
		return sendJSONFile(c, fmt.Sprintf("run-%s-%s-%d-%d-output.json", id, fileSafe(node), gen, n), g.Node(node, value))
	}
}

// handleSignalJSON downloads the payload of a signal the run holds
// (/json/signals?request_id=).
func handleSignalJSON(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		value, err := s.SignalPayload(ctx, v.Tenant.ID, id, c.QueryParam("request_id"))
		if err != nil {
			return err
		}
		return sendJSONFile(c, fmt.Sprintf("run-%s-signal-payload.json", id), value)
	}
}

// handleCaseJSON downloads a case's data whole, for whom the inbox shows
// the case: its assignees.
func handleCaseJSON(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		id, err := httpx.PathUUID(c, "id", "case")
		if err != nil {
			return err
		}
		k, err := s.CaseGet(ctx, v.Tenant.ID, id)
		if err != nil {
			return err
		}
		if !httpx.CaseReaderOf(c).MayRead(k) {
			return apperr.New(apperr.Forbidden, "this case is not assigned to you")
		}
		return sendJSONFile(c, fmt.Sprintf("case-%s-data.json", k.ID), k.Data)
	}
}

// fileSafe keeps a name's letters, digits, dots, dashes and underscores
// for a file name.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, name)
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
