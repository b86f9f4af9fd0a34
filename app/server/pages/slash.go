package pages

import (
	"net/http"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/static"
)

// TrailingSlash redirects a dashboard page asked for with a trailing
// slash (/t/dev/, /t/dev/runs/) to its address without it, keeping the
// query. Only GET and HEAD of tenant pages are redirected, and only to a
// path of this site.
func TrailingSlash(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		p := r.URL.Path
		if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !strings.HasPrefix(p, "/t/") || !strings.HasSuffix(p, "/") {
			return next(c)
		}
		p = strings.TrimRight(p, "/")
		if strings.Contains(p, "//") || strings.ContainsRune(p, '\\') {
			return next(c)
		}
		if r.URL.RawQuery != "" {
			p += "?" + r.URL.RawQuery
		}
		// Pre middleware runs before the route's: set the headers here.
		return httpx.SecurityHeaders(func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, p) })(c)
	}
}

// HandleFavicon sends browsers that ask for /favicon.ico to the icon.
func HandleFavicon() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, static.Path("img/favicon.svg"))
	}
}
