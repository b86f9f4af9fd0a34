package server

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ductor/ductor/static"
)

// routes lists every route Ductor serves.
func routes(e *echo.Echo, d Deps) {
	e.Use(middleware.RequestID())
	e.Use(requestLogger(d.Logger))
	e.Use(recoverer(d.Logger))

	e.GET("/healthz", handleHealthz())
	e.GET("/readyz", handleReadyz(d.Pool))
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(d.Registry, promhttp.HandlerOpts{})))

	if d.API {
		api := e.Group("/api/v1", bodyLimit(MaxBodyBytes), apiKeyAuth(d.Store))
		api.GET("/whoami", handleWhoami())
	}
	if d.Web {
		e.GET(static.Prefix+"*", echo.WrapHandler(static.Handler()))
		e.GET("/", handleHome())
	}
}
