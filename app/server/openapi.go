package server

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDocument is the API's OpenAPI 3.1 description. TestOpenAPI*
// keep it and the routes in step: every /api/v1 route is documented, and
// every documented operation is a route.
//
//go:embed openapi.json
var openAPIDocument []byte

// handleOpenAPI serves the API's description. It is documentation, so it
// needs no API key.
func handleOpenAPI() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
	}
}
