package pages

import (
	"fmt"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
)

// handleUnpublishForm unpublishes a version from the editor's versions
// table (as DELETE /api/v1/definitions/{key}/versions/{n} does): runs on
// it keep going, new runs by key start the newest version still
// published. It answers the editor, which says so.
func handleUnpublishForm(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, key := httpx.ViewerOf(c), c.Param("key")
		n, err := strconv.Atoi(c.Param("n"))
		if err != nil || n < 1 {
			return apperr.New(apperr.NotFound, "definition %s version %s not found", key, c.Param("n"))
		}
		_, changed, err := s.DefinitionVersionUnpublish(c.Request().Context(), v.Tenant.ID, key, n, v.Actor())
		if err != nil {
			return err
		}
		notice := fmt.Sprintf("Unpublished v%d: runs on it go on; new runs start the newest version still published", n)
		if !changed {
			notice = fmt.Sprintf("v%d was already unpublished", n)
		}
		return editorSaved(c, key, notice)
	}
}
