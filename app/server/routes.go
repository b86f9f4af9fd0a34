package server

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ductor/ductor/static"
)

// routes lists every route Ductor serves: the process-wide ones here, the
// API's in apiRoutes and the dashboard's in webRoutes.
func routes(e *echo.Echo, d Deps) {
	e.Use(middleware.RequestID())
	e.Use(requestLogger(d.Logger))
	e.Use(recoverer(d.Logger))

	e.GET("/healthz", handleHealthz())
	e.GET("/readyz", handleReadyz(d.Pool))
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(d.Registry, promhttp.HandlerOpts{})))

	if d.API {
		apiRoutes(e.Group("/api/v1", bodyLimit(MaxBodyBytes), apiKeyAuth(d.Store)), d)
	}
	if d.Web {
		e.GET(static.Prefix+"*", echo.WrapHandler(static.Handler()))
		webRoutes(e, d)
	}
}

// apiRoutes lists the JSON API under /api/v1; every route is authenticated
// by an API key and confined to the key's tenant.
func apiRoutes(api *echo.Group, d Deps) {
	api.GET("/whoami", handleWhoami())
}

// webRoutes lists the dashboard's pages.
func webRoutes(e *echo.Echo, d Deps) {
	e.GET("/", handleHome())
}
