package httpx

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

// RequestID is the request's id, for logs.
func RequestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

// BodyLimit refuses bodies over max: at once when Content-Length says so,
// and without reading past max otherwise.
func BodyLimit(max int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > max {
				return apperr.New(apperr.TooLarge, "request body exceeds %d bytes", max)
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, max)
			return next(c)
		}
	}
}

// Principal is who a request acts as.
type Principal struct {
	Key store.APIKey
}

// principalKey is where the authenticated Principal is kept in the
// request's context.
const principalKey = "ductor.principal"

// PrincipalOf is the request's authenticated API key, if any.
func PrincipalOf(c echo.Context) (Principal, bool) {
	p, ok := c.Get(principalKey).(Principal)
	return p, ok
}

// RequireScope refuses keys that lack the scope.
func RequireScope(scope auth.Scope) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p, ok := PrincipalOf(c)
			if !ok || !auth.Allows(p.Key.Scopes, scope) {
				return apperr.New(apperr.Forbidden, "API key lacks scope %s", scope)
			}
			return next(c)
		}
	}
}
