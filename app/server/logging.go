package server

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
)

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
				"request_id", httpx.RequestID(c),
			}
			if p, ok := httpx.PrincipalOf(c); ok {
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
						"panic", fmt.Sprint(r), "stack", string(debug.Stack()), "request_id", httpx.RequestID(c))
					err = apperr.New(apperr.Internal, "internal error")
				}
			}()
			return next(c)
		}
	}
}
