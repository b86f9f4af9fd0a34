package pages

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/views"
)

// shellFor fills the dashboard shell for a tenant page: render a page
// inside the shell with views.Shell(shellFor(c, title, section)).
func shellFor(c echo.Context, title, section string) views.ShellData {
	v := httpx.ViewerOf(c)
	tenants := make([]views.TenantLink, len(v.Tenants))
	for i, m := range v.Tenants {
		tenants[i] = views.TenantLink{Slug: m.Tenant.Slug, Name: m.Tenant.Name}
	}
	return views.ShellData{
		Title: title, Section: section, User: v.User.Email, Role: string(v.Role),
		Tenant:  views.TenantLink{Slug: v.Tenant.Slug, Name: v.Tenant.Name},
		Tenants: tenants, CSRF: v.CSRF, DevLogin: httpx.SiteOf(c).DevLogin, Inbox: inboxBadge(c),
	}
}

// settingsTabs lists the settings pages the viewer may open.
func settingsTabs(c echo.Context, active string) views.SettingsTabs {
	v := httpx.ViewerOf(c)
	return views.SettingsTabs{
		Active: active, ShowKeys: v.Can(auth.PermKeysManage),
		ShowMembers: v.Can(auth.PermMembersManage), ShowAudit: v.Can(auth.PermAuditRead),
	}
}

// seeOther redirects after a successful form post (post/redirect/get).
func seeOther(c echo.Context, tenantPath string) error {
	return c.Redirect(http.StatusSeeOther, "/t/"+httpx.ViewerOf(c).Tenant.Slug+tenantPath)
}

// ErrorPage is the error page of a request inside a tenant: the message
// in the tenant's navigation (httpx.TenantErrorPage). A server error
// (the database unreachable, say) gets the plain page, which asks the
// database for nothing.
func ErrorPage(c echo.Context, status int, message string) templ.Component {
	if status >= http.StatusInternalServerError {
		return views.ErrorPage(status, message)
	}
	return views.TenantErrorPage(shellFor(c, "Error", ""), status, message)
}
