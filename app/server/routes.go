package server

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/static"
)

// routes lists every route Ductor serves: the process-wide ones here, the
// API's in apiRoutes (routes_api.go) and the dashboard's in webRoutes
// (routes_pages.go). No other file registers a route.
func routes(e *echo.Echo, d Deps) {
	e.Use(requestMetrics(newHTTPMetrics(d.Registry)))
	e.Use(middleware.RequestID())
	e.Use(securityHeaders)
	e.Use(requestLogger(d.Logger))
	e.Use(recoverer(d.Logger))
	e.Use(refuseNUL)

	e.GET("/healthz", handleHealthz())
	e.GET("/readyz", handleReadyz(d.Pool))
	e.GET("/metrics", metricsHandler(d.Registry, d.Logger))

	if d.API {
		e.GET("/api/v1/openapi.json", handleOpenAPI()) // documentation: no key needed
		e.GET(definition.SchemaPath, handleDefinitionSchema())
		failures := newFailureLimiter(d.AuthFailuresPerMinute, d.AuthFailureBurst)
		apiRoutes(e.Group("/api/v1", bodyLimit(MaxBodyBytes), apiKeyAuth(d.Store, failures, d.TrustedProxies), rateLimit(d.APIRate)), d.apiDeps())
		h := newHooks(d.apiDeps())
		e.POST("/hooks/:tenant/:id", h.handleHookDelivery) // signed: no API key; bounds its body itself
	}
	if d.Web {
		e.Pre(trailingSlash)
		e.GET(static.Prefix+"*", echo.WrapHandler(static.Handler()))
		e.GET("/favicon.ico", handleFavicon())
		webRoutes(e, d.pagesDeps())
	}
}
