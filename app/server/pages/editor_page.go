package pages

import (
	"context"
	"net/http"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleEditor opens a definition in the editor: its draft, or else its
// newest version's source.
func handleEditor(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v, key := c.Request().Context(), httpx.ViewerOf(c), c.Param("key")
		def, err := s.DefinitionGet(ctx, v.Tenant.ID, key)
		if err != nil {
			return err
		}
		src, err := editorSource(ctx, s, def)
		if err != nil {
			return err
		}
		notice := ""
		if c.QueryParam("done") != "" {
			f, _ := httpx.TakeFlash(c, "/definitions/"+key+"/edit")
			notice = f.Notice
		}
		return renderEditor(c, s, http.StatusOK, def, src, notice)
	}
}

// editorSource is the text the editor starts from, as YAML when it can be.
func editorSource(ctx context.Context, s *store.Store, def store.Definition) (string, error) {
	if def.Draft != nil {
		return asYAML(def.Draft.Source), nil
	}
	if def.LatestVersion == 0 {
		return "key: " + def.Key + "\nsteps: []\n", nil
	}
	ver, err := s.DefinitionVersionGet(ctx, def.TenantID, def.Key, def.LatestVersion)
	if err != nil {
		return "", err
	}
	return asYAML(ver.Source), nil
}

// asYAML shows a JSON source as YAML; YAML, or JSON that does not
// convert, is returned as it is.
func asYAML(src string) string {
	if definition.Detect([]byte(src), definition.FormatAuto) != definition.FormatJSON {
		return src
	}
	if y := checkDocument("", []byte(src)).YAML; y != "" {
		return y
	}
	return src
}

// renderEditor renders the editor on src, with a notice from a form post.
// Each opt may add to what the page shows.
func renderEditor(c echo.Context, s *store.Store, status int, def store.Definition, src, notice string, opts ...func(*views.EditorData)) error {
	ctx, v := c.Request().Context(), httpx.ViewerOf(c)
	versions, err := s.DefinitionVersionList(ctx, v.Tenant.ID, def.Key)
	if err != nil {
		return err
	}
	check := checkDocument(def.Key, []byte(src))
	rules, err := flowRules(ctx, s, v.Tenant.ID, def.Key, versions)
	if err != nil {
		return err
	}
	triggers, err := s.EventTriggersOf(ctx, v.Tenant.ID, def.Key)
	if err != nil {
		return err
	}
	schedules, err := s.ScheduleListOfDefinition(ctx, v.Tenant.ID, def.Key, httpx.MaxPage)
	if err != nil {
		return err
	}
	d := views.EditorData{
		Key: def.Key, Name: def.Name, Source: src, Problems: check.Problems, Hash: check.Hash, Check: check,
		CanWrite: v.Can(auth.PermDefinitionsWrite), CanRun: canTestRun(v),
		Draft: def.Draft, Versions: versions, Notice: notice, Flow: rules, Triggers: triggers,
		Schedules: schedules,
	}
	for _, opt := range opts {
		opt(&d)
	}
	return httpx.Render(c, status, views.EditorPage(shellFor(c, def.Key+" · Editor", "definitions"), d))
}

// canTestRun: authors test what they write, operators run anything.
func canTestRun(v httpx.Viewer) bool {
	return v.Can(auth.PermDefinitionsWrite) || v.Can(auth.PermRunsOperate)
}

// needAny refuses a member whose role holds none of the permissions.
func needAny(ps ...auth.Permission) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			for _, p := range ps {
				if httpx.ViewerOf(c).Can(p) {
					return next(c)
				}
			}
			return apperr.New(apperr.Forbidden, "your role in this tenant does not allow this")
		}
	}
}

// wantsJSON reports whether the editor's script made the request; a plain
// form post gets the page back.
func wantsJSON(c echo.Context) bool {
	return strings.Contains(c.Request().Header.Get(echo.HeaderAccept), echo.MIMEApplicationJSON)
}
