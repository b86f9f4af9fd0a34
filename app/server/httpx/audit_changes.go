package httpx

import (
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
)

// RequestActor names who makes the request, as the audit log and cases
// record it: the API key (key:PREFIX) or the signed-in person
// (user:EMAIL), and the tenant they act for.
func RequestActor(c echo.Context) (tenantID uuid.UUID, actor string) {
	if p, ok := PrincipalOf(c); ok {
		return p.Key.TenantID, store.ActorKey(p.Key)
	}
	if v, ok := c.Get(viewerKey).(Viewer); ok {
		return v.Tenant.ID, v.Actor()
	}
	return uuid.Nil, ""
}

// AuditAPI records a change the request made, once it is made, in the
// tenant's audit log (the change commits first: a failure to record it is
// an error answer to a change that stays).
func AuditAPI(c echo.Context, s *store.Store, action, target string, details map[string]any) error {
	tenantID, actor := RequestActor(c)
	return s.AuditRecord(c.Request().Context(), tenantID, actor, action, target, details)
}
