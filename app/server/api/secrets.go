package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/tenantsecrets"
)

// MaxSecretBodyBytes bounds a PUT /secrets/{name} body: a 64 KiB value,
// JSON-escaped, and its description.
const MaxSecretBodyBytes = 8*tenantsecrets.MaxValueBytes + 16<<10

// SecretJSON is a secret's metadata; there is no field for its value.
type SecretJSON struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Version     int        `json:"version"`
	CreatedAt   time.Time  `json:"created_at"`
	CreatedBy   string     `json:"created_by"`
	UpdatedAt   time.Time  `json:"updated_at"`
	UpdatedBy   string     `json:"updated_by"`
	LastUsedAt  *time.Time `json:"last_used_at"`
}

// secretDetailJSON is GET /secrets/{name}: the metadata, and the
// published definition versions that reference the secret.
type secretDetailJSON struct {
	SecretJSON
	UsedBy []tenantsecrets.Use `json:"used_by"`
}

func secretJSON(s store.TenantSecret) SecretJSON {
	return SecretJSON{Name: s.Name, Description: s.Description, Version: s.Version, CreatedAt: s.CreatedAt, CreatedBy: s.CreatedBy,
		UpdatedAt: s.UpdatedAt, UpdatedBy: s.UpdatedBy, LastUsedAt: s.LastUsedAt}
}

// handleSecretPut sets a secret's value: it creates the secret, or
// rotates it to the next version. The answer is the metadata only.
func handleSecretPut(svc *tenantsecrets.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Value       *string `json:"value"`
			Description string  `json:"description"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if req.Value == nil {
			return apperr.New(apperr.Invalid, "value is required")
		}
		tenantID, actor := httpx.RequestActor(c)
		s, err := svc.Set(c.Request().Context(), tenantID, actor, c.Param("name"), req.Description, []byte(*req.Value))
		if err != nil {
			return err
		}
		status := http.StatusOK
		if s.Version == 1 {
			status = http.StatusCreated
		}
		return c.JSON(status, secretJSON(s))
	}
}

func handleSecretList(svc *tenantsecrets.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		list, resp, err := httpx.KeyedPage(c, func(after string, n int) ([]store.TenantSecret, error) {
			return svc.List(ctx, httpx.TenantOf(c), after, n)
		}, func(s store.TenantSecret) string { return s.Name })
		if err != nil {
			return err
		}
		out := make([]SecretJSON, len(list))
		for i, s := range list {
			out[i] = secretJSON(s)
		}
		resp["secrets"] = out
		return c.JSON(http.StatusOK, resp)
	}
}

func handleSecretGet(svc *tenantsecrets.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, tenantID := c.Request().Context(), httpx.TenantOf(c)
		s, err := svc.Get(ctx, tenantID, c.Param("name"))
		if err != nil {
			return err
		}
		uses, err := svc.Uses(ctx, tenantID, []string{s.Name})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, secretDetailJSON{SecretJSON: secretJSON(s), UsedBy: uses[s.Name]})
	}
}

func handleSecretDelete(svc *tenantsecrets.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		tenantID, actor := httpx.RequestActor(c)
		if err := svc.Delete(c.Request().Context(), tenantID, actor, c.Param("name")); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"name": c.Param("name"), "deleted": true})
	}
}
