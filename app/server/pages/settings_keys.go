package pages

import (
	"net/http"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// handleKeys lists the tenant's API keys; after a key was created
// (?created=ID) it shows that key's secret, once.
func handleKeys(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		d := views.KeysData{}
		if created := c.QueryParam("created"); created != "" {
			f, ok := httpx.TakeFlash(c, "/settings/keys")
			d.Created, d.ShownBefore = created, !ok || f.ID != created
			if !d.ShownBefore {
				d.NewSecret = f.Secret
			}
		}
		return renderKeys(c, s, http.StatusOK, d)
	}
}

func renderKeys(c echo.Context, s *store.Store, status int, d views.KeysData) error {
	keys, err := s.APIKeyList(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID)
	if err != nil {
		return err
	}
	d.Tabs, d.Keys = settingsTabs(c, "keys"), keys
	for i := range keys {
		if keys[i].ID.String() == d.Created {
			d.NewKey = &keys[i]
		}
	}
	return httpx.Render(c, status, views.KeysPage(shellFor(c, "API keys", "settings"), d))
}

// handleKeyCreate creates a key and redirects to the keys page, which
// shows its secret once (handed over in a flash, never stored).
func handleKeyCreate(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		name := strings.TrimSpace(c.FormValue("name"))
		form, _ := c.FormParams()
		scopes, err := auth.ParseScopes(form["scope"])
		if len(form["scope"]) == 0 {
			err = apperr.New(apperr.Invalid, "choose at least one scope (admin allows everything)")
		}
		if name == "" || len(name) > 100 {
			err = apperr.New(apperr.Invalid, "a key needs a name of at most 100 characters")
		}
		if err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error {
				return renderKeys(c, s, status, views.KeysData{Error: msg})
			})
		}
		var key store.APIKey
		var secret string
		err = s.InTx(c.Request().Context(), func(tx *store.Store) error {
			key, secret, err = tx.APIKeyCreateBy(c.Request().Context(), v.Tenant.ID, name, scopes, v.User.ID)
			if err != nil {
				return err
			}
			return tx.AuditRecord(c.Request().Context(), v.Tenant.ID, v.Actor(), store.AuditKeyCreate, key.Prefix,
				map[string]any{"name": name, "scopes": scopes, "id": key.ID})
		})
		if err != nil {
			return err
		}
		httpx.SetFlash(c, "/settings/keys", httpx.Flash{ID: key.ID.String(), Secret: secret})
		return seeOther(c, "/settings/keys?created="+key.ID.String())
	}
}

// handleKeyRevoke revokes a key of this tenant; another tenant's key id
// is NotFound.
func handleKeyRevoke(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		id, err := uuid.Parse(c.Param("id"))
		if err != nil {
			return apperr.New(apperr.NotFound, "API key not found")
		}
		err = s.InTx(c.Request().Context(), func(tx *store.Store) error {
			key, err := tx.APIKeyRevoke(c.Request().Context(), v.Tenant.ID, id)
			if err != nil {
				return err
			}
			return tx.AuditRecord(c.Request().Context(), v.Tenant.ID, v.Actor(), store.AuditKeyRevoke, key.Prefix,
				map[string]any{"name": key.Name, "id": key.ID})
		})
		if err != nil {
			return err
		}
		return seeOther(c, "/settings/keys")
	}
}
