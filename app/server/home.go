package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/views"
)

// handleHome renders the landing page.
func handleHome() echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
		c.Response().WriteHeader(http.StatusOK)
		return views.Home().Render(c.Request().Context(), c.Response())
	}
}
