package api

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/usage"
)

// WhoamiResponse is the answer of GET /api/v1/whoami: the key's tenant
// and what the key may do.
type WhoamiResponse struct {
	TenantID string       `json:"tenant_id"`
	KeyID    string       `json:"key_id"`
	KeyName  string       `json:"key_name"`
	Prefix   string       `json:"prefix"`
	Scopes   []auth.Scope `json:"scopes"`
	// Quota is the tenant's quotas and their use now.
	Quota usage.State `json:"quota"`
}

// handleWhoami tells a key holder which tenant and scopes the key
// carries, and the tenant's quota state.
func handleWhoami(u *usage.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, _ := httpx.PrincipalOf(c)
		state, err := u.State(c.Request().Context(), p.Key.TenantID)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, WhoamiResponse{
			TenantID: p.Key.TenantID.String(), KeyID: p.Key.ID.String(),
			KeyName: p.Key.Name, Prefix: p.Key.Prefix, Scopes: p.Key.Scopes, Quota: state,
		})
	}
}
