package pages

import (
	"net/http"
	"strconv"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
)

// draftSaved answers the editor's script after a save or publish.
type draftSaved struct {
	editorCheck
	SavedAt string `json:"saved_at,omitempty"`
	// Version and VersionHash are set by a publish; Created is false when
	// the latest version already had this manifest.
	Version     int    `json:"version,omitempty"`
	VersionHash string `json:"version_hash,omitempty"`
	Created     bool   `json:"created,omitempty"`
}

// handleDraftSaveForm saves the posted document as the draft when it
// compiles, as the API does: a document that does not parse or compile,
// or names another key, is refused with its problems (422) and the
// previous draft is kept; the editor keeps the work on the page and asks
// before it is left.
func handleDraftSaveForm(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v, key := c.Request().Context(), httpx.ViewerOf(c), c.Param("key")
		src := c.FormValue("document")
		check := checkDocument(key, []byte(src))
		if err := keyMismatch(check); err != nil {
			return editorFailure(c, s, check, src, err)
		}
		if !check.Valid() {
			return editorFailure(c, s, check, src, draftRefused(check))
		}
		f := definition.Detect([]byte(src), definition.FormatAuto)
		draft, err := s.DefinitionDraftSave(ctx, v.Tenant.ID, key, check.Manifest.Name, store.Draft{Source: src, Format: f.String(), Hash: check.Hash})
		if err != nil {
			return err
		}
		if wantsJSON(c) {
			return c.JSON(http.StatusOK, draftSaved{editorCheck: check, SavedAt: draft.SavedAt.UTC().Format("15:04:05")})
		}
		return editorSaved(c, key, "Draft saved at "+draft.SavedAt.UTC().Format("15:04:05"))
	}
}

// draftRefused says why a draft was not saved: the first problem, which
// the page shows beside the others.
func draftRefused(check editorCheck) error {
	msg := "the draft has problems: fix them to save it"
	if len(check.Problems) > 0 {
		msg = "not saved: " + check.Problems[0].String()
	}
	return apperr.New(apperr.InvalidDefinition, "%s", msg).WithDetails(check.Problems)
}

// editorSaved redirects a form post back to the editor, which says what
// was done (post/redirect/get).
func editorSaved(c echo.Context, key, notice string) error {
	path := "/definitions/" + key + "/edit"
	httpx.SetFlash(c, path, httpx.Flash{Notice: notice})
	return seeOther(c, path+"?done=saved")
}

// handlePublishForm saves the posted document as the draft and publishes
// it: 201 with a new version, 200 with the latest one when its manifest
// is the same, 422 with every problem when it does not compile.
func handlePublishForm(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, v, key := c.Request().Context(), httpx.ViewerOf(c), c.Param("key")
		src := c.FormValue("document")
		check := checkDocument(key, []byte(src))
		if !check.Valid() {
			return editorFailure(c, s, check, src, apperr.New(apperr.InvalidDefinition, "the document has problems: fix them to publish"))
		}
		f := definition.Detect([]byte(src), definition.FormatAuto)
		var ver store.DefinitionVersion
		var created bool
		err := s.InTx(ctx, func(tx *store.Store) error {
			_, err := tx.DefinitionDraftSave(ctx, v.Tenant.ID, key, check.Manifest.Name, store.Draft{Source: src, Format: f.String(), Hash: check.Hash})
			if err != nil {
				return err
			}
			ver, created, err = tx.DefinitionPublish(ctx, v.Tenant.ID, store.Publication{
				Manifest: check.Manifest, ManifestHash: check.Hash, Source: src, SourceFormat: f.String(), Actor: v.Actor(),
			})
			return err
		})
		if err != nil {
			return err
		}
		status := map[bool]int{true: http.StatusCreated, false: http.StatusOK}[created]
		if wantsJSON(c) {
			return c.JSON(status, draftSaved{editorCheck: check, Version: ver.Version, VersionHash: ver.ManifestHash, Created: created})
		}
		return editorSaved(c, key, "Published "+versionName(ver.Version)+" · "+ver.ManifestHash)
	}
}

func versionName(n int) string { return "v" + strconv.Itoa(n) }

func keyMismatch(check editorCheck) error {
	for _, p := range check.Problems {
		if p.Path == "key" && p.Step == "" {
			return apperr.New(apperr.InvalidDefinition, "%s", p.Message).WithDetails(check.Problems)
		}
	}
	return nil
}

// editorFailure answers a refused save or publish: the script gets the
// check with the error's status, a form post the page with its problems.
func editorFailure(c echo.Context, s *store.Store, check editorCheck, src string, err error) error {
	status, body := httpx.ToBody(err)
	if wantsJSON(c) {
		return c.JSON(status, map[string]any{"error": body.Error, "check": check})
	}
	def, gerr := s.DefinitionGet(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, c.Param("key"))
	if gerr != nil {
		return gerr
	}
	return renderEditor(c, s, status, def, src, body.Error.Message)
}
