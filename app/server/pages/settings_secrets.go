package pages

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/tenantsecrets"
	"github.com/ductor/ductor/views"
)

func handleSecretsPage(svc *tenantsecrets.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		return renderSecrets(c, svc, http.StatusOK, views.SecretsData{Saved: c.QueryParam("saved")})
	}
}

func renderSecrets(c echo.Context, svc *tenantsecrets.Service, status int, d views.SecretsData) error {
	v := httpx.ViewerOf(c)
	list, err := svc.List(c.Request().Context(), v.Tenant.ID, "", httpx.MaxPage)
	if err != nil {
		return err
	}
	names := make([]string, len(list))
	for i, sec := range list {
		names[i] = sec.Name
	}
	uses, err := svc.Uses(c.Request().Context(), v.Tenant.ID, names)
	if err != nil {
		return err
	}
	d.Tabs, d.Secrets, d.Uses, d.CanManage = settingsTabs(c, "secrets"), list, uses, v.Can(auth.PermKeysManage)
	return httpx.Render(c, status, views.SecretsPage(shellFor(c, "Secrets", "settings"), d))
}

// handleSecretSetForm sets or rotates a secret and redirects to the list;
// the value is never rendered back, not even into the form after an
// error.
func handleSecretSetForm(svc *tenantsecrets.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		tenantID, actor := httpx.RequestActor(c)
		name := strings.TrimSpace(c.FormValue("name"))
		_, err := svc.Set(c.Request().Context(), tenantID, actor, name, strings.TrimSpace(c.FormValue("description")), []byte(c.FormValue("value")))
		if err != nil {
			return httpx.FormError(c, err, func(status int, msg string) error {
				return renderSecrets(c, svc, status, views.SecretsData{Error: msg})
			})
		}
		return seeOther(c, "/settings/secrets?saved="+url.QueryEscape(name))
	}
}

func handleSecretDeleteForm(svc *tenantsecrets.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		tenantID, actor := httpx.RequestActor(c)
		if err := svc.Delete(c.Request().Context(), tenantID, actor, c.Param("name")); err != nil {
			return err
		}
		return seeOther(c, "/settings/secrets")
	}
}
