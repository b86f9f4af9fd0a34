package pages

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
)

// editorHints is what the editor's pickers offer: handlers to run, people
// and roles to ask, definitions (with their published versions) to start.
// Free text stays allowed in every field they feed.
type editorHints struct {
	Handlers    []string                   `json:"handlers"`
	Members     []hintMember               `json:"members"`
	Roles       []string                   `json:"roles"`
	Definitions []store.DefinitionVersions `json:"definitions"`
}

type hintMember struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
	Role  string `json:"role"`
}

// handleEditorHints answers the editor's pickers in JSON: the built-in
// handlers and those the database has seen the tenant use, the tenant's
// members and roles, and its definitions with their published versions.
func handleEditorHints(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v := c.Request().Context(), httpx.ViewerOf(c)
		seen, err := s.HandlersSeen(ctx, v.Tenant.ID)
		if err != nil {
			return err
		}
		members, err := s.MemberList(ctx, v.Tenant.ID)
		if err != nil {
			return err
		}
		defs, err := s.DefinitionVersionsList(ctx, v.Tenant.ID)
		if err != nil {
			return err
		}
		h := editorHints{Handlers: mergeHandlers(definition.BuiltinHandlers, seen), Members: []hintMember{}, Definitions: defs}
		for _, m := range members {
			h.Members = append(h.Members, hintMember{Email: m.Email, Name: m.Name, Role: string(m.Role)})
		}
		for _, r := range auth.Roles {
			h.Roles = append(h.Roles, "role:"+string(r))
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, h)
	}
}

// mergeHandlers is the built-in handlers, then the others seen, each once
// and in order.
func mergeHandlers(builtin, seen []string) []string {
	out := slices.Clone(builtin)
	for _, h := range seen {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}
