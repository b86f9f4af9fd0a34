package pages

import "github.com/labstack/echo/v4"

// handleTenantHome sends /t/{tenant} to the tenant's runs.
func handleTenantHome() echo.HandlerFunc {
	return func(c echo.Context) error { return seeOther(c, "/runs") }
}
