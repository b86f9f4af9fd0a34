package pages

import (
	"context"
	"net/http"
	"strconv"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleDefinitionDiff shows two sources of a definition side by side:
// ?from=N&to=M, where either may be "draft"; from defaults to the latest
// version and to to the draft.
func handleDefinitionDiff(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v, key := c.Request().Context(), httpx.ViewerOf(c), c.Param("key")
		def, err := s.DefinitionGet(ctx, v.Tenant.ID, key)
		if err != nil {
			return err
		}
		fromName, toName := c.QueryParam("from"), c.QueryParam("to")
		if fromName == "" {
			fromName = strconv.Itoa(def.LatestVersion)
		}
		if toName == "" {
			toName = "draft"
		}
		from, err := sourceOf(ctx, s, def, fromName)
		if err != nil {
			return err
		}
		to, err := sourceOf(ctx, s, def, toName)
		if err != nil {
			return err
		}
		rows := lineDiff(from, to)
		changed := 0
		for _, r := range rows {
			if r.Kind != "same" {
				changed++
			}
		}
		d := views.DiffData{Key: key, From: sourceName(fromName), To: sourceName(toName), Rows: rows, Changed: changed}
		return httpx.Render(c, http.StatusOK, views.DiffPage(shellFor(c, key+" · Compare", "definitions"), d))
	}
}

// sourceOf is the YAML source of a version number or of the draft.
func sourceOf(ctx context.Context, s *store.Store, def store.Definition, which string) (string, error) {
	if which == "0" { // no version yet: compare with nothing
		return "", nil
	}
	if which == "draft" {
		if def.Draft == nil {
			return "", nil
		}
		return asYAML(def.Draft.Source), nil
	}
	n, err := strconv.Atoi(which)
	if err != nil || n < 1 || n > 1<<31-1 {
		return "", apperr.New(apperr.NotFound, "definition %s has no version %q", def.Key, which)
	}
	ver, err := s.DefinitionVersionGet(ctx, def.TenantID, def.Key, n)
	if err != nil {
		return "", err
	}
	return asYAML(ver.Source), nil
}

func sourceName(which string) string {
	switch which {
	case "draft":
		return "draft"
	case "0":
		return "nothing"
	}
	return "v" + which
}
