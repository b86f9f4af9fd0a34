package httpx

import (
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

// Viewer is who is looking at a tenant's page: the logged-in person, the
// tenant of the URL, their role in it, and all their tenants (for the
// switcher). Every handler under /t/{tenant} can rely on it.
type Viewer struct {
	User    store.User
	Tenant  store.Tenant
	Role    auth.Role
	Tenants []store.Membership
	CSRF    string
}

const viewerKey = "ductor.viewer"

// StoreKey holds the store for what the shell shows on every page (the
// inbox badge).
const StoreKey = "ductor.store"

// ViewerOf returns the request's viewer; only routes behind TenantAccess
// have one.
func ViewerOf(c echo.Context) Viewer {
	v, ok := c.Get(viewerKey).(Viewer)
	if !ok {
		panic("viewerOf outside a /t/{tenant} route")
	}
	return v
}

// Actor names the viewer in the audit log.
func (v Viewer) Actor() string { return store.ActorUser(v.User.Email) }

// Can reports whether the viewer's role holds the permission.
func (v Viewer) Can(p auth.Permission) bool { return v.Role.Can(p) }

// TenantAccess resolves /t/{tenant} for the logged-in person. A tenant
// they do not belong to is NotFound, exactly like one that does not exist,
// so URLs reveal nothing about other tenants.
func TenantAccess(st *store.Store) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			sess, ok := SessionOf(c)
			if !ok {
				return apperr.New(apperr.Unauthorized, "not logged in")
			}
			ms, err := st.MembershipsOf(c.Request().Context(), sess.User.Email)
			if err != nil {
				return err
			}
			slug := c.Param("tenant")
			for _, m := range ms {
				if m.Tenant.Slug == slug {
					c.Set(viewerKey, Viewer{User: sess.User, Tenant: m.Tenant, Role: m.Role, Tenants: ms, CSRF: sess.CSRFToken})
					c.Set(StoreKey, st)
					return next(c)
				}
			}
			return apperr.New(apperr.NotFound, "page not found")
		}
	}
}

// Need refuses a member whose role lacks the permission.
func Need(p auth.Permission) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !ViewerOf(c).Can(p) {
				return apperr.New(apperr.Forbidden, "your role in this tenant does not allow this")
			}
			return next(c)
		}
	}
}
