package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
)

type whoamiResponse struct {
	TenantID string       `json:"tenant_id"`
	KeyID    string       `json:"key_id"`
	KeyName  string       `json:"key_name"`
	Prefix   string       `json:"prefix"`
	Scopes   []auth.Scope `json:"scopes"`
}

// handleWhoami tells a key holder which tenant and scopes the key carries.
func handleWhoami() echo.HandlerFunc {
	return func(c echo.Context) error {
		p, _ := principalOf(c)
		return c.JSON(http.StatusOK, whoamiResponse{
			TenantID: p.Key.TenantID.String(), KeyID: p.Key.ID.String(),
			KeyName: p.Key.Name, Prefix: p.Key.Prefix, Scopes: p.Key.Scopes,
		})
	}
}
