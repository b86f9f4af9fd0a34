package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/views"
)

// handleTenantHome sends /t/{tenant} to the tenant's runs.
func handleTenantHome() echo.HandlerFunc {
	return func(c echo.Context) error { return seeOther(c, "/runs") }
}

// handlePlaceholder renders a tenant page that is not built yet.
func handlePlaceholder(title, section, text string) echo.HandlerFunc {
	return func(c echo.Context) error {
		return render(c, http.StatusOK, views.Placeholder(shellFor(c, title, section), text))
	}
}
