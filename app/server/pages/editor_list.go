package pages

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// definitionsPerPage is how many definitions the list shows at once.
const definitionsPerPage = 100

// definitionKey is the format of a definition key.
var definitionKey = regexp.MustCompile(`^[a-z0-9][a-z0-9\-_]{0,62}$`)

// handleDefinitions lists the tenant's definitions by key.
func handleDefinitions(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		return renderDefinitions(c, s, http.StatusOK, views.DefinitionsData{})
	}
}

func renderDefinitions(c echo.Context, s *store.Store, status int, d views.DefinitionsData) error {
	v := httpx.ViewerOf(c)
	d.Query = strings.TrimSpace(c.QueryParam("q"))
	if len(d.Query) > 200 {
		return apperr.New(apperr.Invalid, "the search is longer than 200 characters")
	}
	defs, err := s.DefinitionListMatching(c.Request().Context(), v.Tenant.ID, d.Query, c.QueryParam("after"), definitionsPerPage+1)
	if err != nil {
		return err
	}
	if len(defs) > definitionsPerPage {
		defs = defs[:definitionsPerPage]
		d.NextAfter = defs[definitionsPerPage-1].Key
	}
	keys := make([]string, len(defs))
	for i, def := range defs {
		keys[i] = def.Key
	}
	if d.LastRuns, err = s.RunLatestOfDefinitions(c.Request().Context(), v.Tenant.ID, keys); err != nil {
		return err
	}
	d.Definitions, d.CanWrite = defs, v.Can(auth.PermDefinitionsWrite)
	return httpx.Render(c, status, views.DefinitionsPage(shellFor(c, "Definitions", "definitions"), d))
}

// handleDefinitionCreate creates a definition with an empty draft and
// opens it; an existing key is opened as it is.
func handleDefinitionCreate(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		key := strings.TrimSpace(c.FormValue("key"))
		if !definitionKey.MatchString(key) {
			err := apperr.New(apperr.Invalid, "a key is 1 to 63 lowercase letters, digits, - or _, starting with a letter or digit")
			return httpx.FormError(c, err, func(status int, msg string) error {
				return renderDefinitions(c, s, status, views.DefinitionsData{Error: msg, NewKey: key})
			})
		}
		_, err := s.DefinitionGet(ctx, v.Tenant.ID, key)
		if apperr.Is(err, apperr.NotFound) {
			draft := store.Draft{Source: "key: " + key + "\nsteps: []\n", Format: definition.FormatYAML.String()}
			_, err = s.DefinitionDraftSave(ctx, v.Tenant.ID, key, "", draft)
		}
		if err != nil {
			return err
		}
		return seeOther(c, "/definitions/"+key+"/edit")
	}
}
