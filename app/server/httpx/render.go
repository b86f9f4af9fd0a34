package httpx

import (
	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// Render writes a templ component as the HTML answer. Pages are private
// and per person, so they are never cached. (Every response gets the
// security headers: see securityHeaders.)
func Render(c echo.Context, status int, comp templ.Component) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response())
}
