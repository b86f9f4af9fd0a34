package server

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ductor/ductor/app/server/api"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/server/pages"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/static"
)

// routes lists every route Ductor serves: the process-wide ones here, the
// API's in api.Routes (routes_api.go) and the dashboard's in pages.Routes
// (routes_pages.go). No other file registers a route.
func routes(e *echo.Echo, d Deps) {
	e.Use(requestMetrics(newHTTPMetrics(d.Registry)))
	e.Use(middleware.RequestID())
	e.Use(httpx.SecurityHeaders)
	e.Use(requestLogger(d.Logger))
	e.Use(recoverer(d.Logger))
	e.Use(httpx.RefuseNUL)

	e.GET("/healthz", handleHealthz())
	e.GET("/readyz", handleReadyz(d.Pool))
	e.GET("/metrics", metricsHandler(d.Registry, d.Logger))

	if d.API {
		e.GET("/api/v1/openapi.json", api.HandleOpenAPI()) // documentation: no key needed
		e.GET(definition.SchemaPath, api.HandleDefinitionSchema())
		failures := httpx.NewFailureLimiter(d.AuthFailuresPerMinute, d.AuthFailureBurst)
		api.Routes(e.Group("/api/v1", httpx.BodyLimit(httpx.MaxBodyBytes), httpx.APIKeyAuth(d.Store, failures, d.TrustedProxies), httpx.RateLimit(d.APIRate)), d.apiDeps())
		h := api.NewHooks(d.apiDeps())
		e.POST("/hooks/:tenant/:id", h.HandleHookDelivery) // signed: no API key; bounds its body itself
	}
	if d.Web {
		e.Pre(pages.TrailingSlash)
		e.GET(static.Prefix+"*", echo.WrapHandler(static.Handler()))
		e.GET("/favicon.ico", pages.HandleFavicon())
		pages.Routes(e, d.pagesDeps())
	}
}
