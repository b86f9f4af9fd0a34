package httpx

import (
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/static"
)

// contentSecurityPolicy lets pages load scripts, styles and images only
// from this site and talk only to it: no inline script, handler or style
// attribute, no plugin, no framing, no form sent elsewhere. The one inline
// element, the editor's import map (JSON that maps module paths to their
// hashed files), is allowed by its hash.
var contentSecurityPolicy = "default-src 'none'; " +
	"script-src 'self' '" + static.ImportMapHash() + "'; " +
	"style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// SecurityHeaders sets, on every response (pages, redirects, errors,
// static files, JSON), the content security policy, nosniff, the
// referrer policy and frame denial.
func SecurityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		return next(c)
	}
}
