package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

// requestLogger writes one structured line per request.
func requestLogger(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			attrs := []any{
				"method", c.Request().Method, "path", c.Request().URL.Path,
				"status", c.Response().Status, "duration", time.Since(start),
				"request_id", requestID(c),
			}
			if p, ok := principalOf(c); ok {
				attrs = append(attrs, "tenant_id", p.Key.TenantID)
			}
			log.InfoContext(c.Request().Context(), "request", attrs...)
			return nil
		}
	}
}

// recoverer turns a handler panic into a 500 and a logged stack.
func recoverer(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				if r := recover(); r != nil {
					log.ErrorContext(c.Request().Context(), "handler panic",
						"panic", fmt.Sprint(r), "stack", string(debug.Stack()), "request_id", requestID(c))
					err = apperr.New(apperr.Internal, "internal error")
				}
			}()
			return next(c)
		}
	}
}

// bodyLimit refuses bodies over max: at once when Content-Length says so,
// and without reading past max otherwise.
func bodyLimit(max int64) echo.MiddlewareFunc {
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

const principalKey = "ductor.principal"

func principalOf(c echo.Context) (Principal, bool) {
	p, ok := c.Get(principalKey).(Principal)
	return p, ok
}

// requireScope refuses keys that lack the scope.
func requireScope(scope auth.Scope) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p, ok := principalOf(c)
			if !ok || !auth.Allows(p.Key.Scopes, scope) {
				return apperr.New(apperr.Forbidden, "API key lacks scope %s", scope)
			}
			return next(c)
		}
	}
}
