package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
)

// bindJSON decodes the request body into v, refusing unknown fields. An
// empty body leaves v as it is.
func bindJSON(c echo.Context, v any) error {
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case errors.As(err, &tooBig):
		return apperr.New(apperr.TooLarge, "request body exceeds %d bytes", tooBig.Limit)
	case err != nil:
		return apperr.New(apperr.Invalid, "malformed JSON body: %v", err)
	}
	if dec.More() {
		return apperr.New(apperr.Invalid, "malformed JSON body: more than one value")
	}
	return nil
}

// pathUUID parses a path parameter as an id; a malformed one is simply not
// found, like an id of another tenant.
func pathUUID(c echo.Context, name, what string) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		return uuid.Nil, apperr.New(apperr.NotFound, "%s not found", what)
	}
	return id, nil
}

// tenantOf is the tenant the authenticated key acts for.
func tenantOf(c echo.Context) uuid.UUID {
	p, _ := principalOf(c)
	return p.Key.TenantID
}
