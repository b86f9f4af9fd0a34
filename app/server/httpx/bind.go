package httpx

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/runs"
)

// BindJSON decodes the request body into v by the JSON value model
// (integral numbers within int64 as int64, others as float64), refusing
// unknown fields. An empty body leaves v as it is. A NUL character
// anywhere in the body, which cannot be stored, is a 422 naming where.
func BindJSON(c echo.Context, v any) error {
	raw, err := DecodeBody(c, v)
	if err != nil || raw == nil {
		return err
	}
	return checkNUL(raw)
}

// DecodeBody is BindJSON without the NUL check, for a body whose values
// are checked where they are used; it returns the body (nil when empty).
func DecodeBody(c echo.Context, v any) ([]byte, error) {
	raw, err := io.ReadAll(c.Request().Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, apperr.New(apperr.TooLarge, "request body exceeds %d bytes", tooBig.Limit)
	case err != nil:
		return nil, apperr.New(apperr.Invalid, "read body: %v", err)
	case len(bytes.TrimSpace(raw)) == 0:
		return nil, nil
	}
	if err := jsonvalue.UnmarshalStrict(raw, v); err != nil {
		return nil, apperr.New(apperr.Invalid, "malformed JSON body: %s", JSONMessage(err))
	}
	return raw, nil
}

// checkNUL finds a NUL character in a JSON body (only ever written as the
// escape \u0000, so the quick test looks for that) and names its path.
func checkNUL(raw []byte) error {
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return nil
	}
	v, err := jsonvalue.Decode(raw)
	if err != nil {
		return nil
	}
	if nul, found := jsonvalue.FindNUL(v); found {
		return runs.NULProblem("request body", strings.TrimPrefix(nul.Path, "."))
	}
	return nil
}

// JSONMessage shortens the decoder's errors to what a caller needs.
func JSONMessage(err error) string {
	msg := err.Error()
	for _, p := range []string{"jsonv2: ", "json: ", "jsontext: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return msg
}

// PathUUID parses a path parameter as an id; a malformed one is simply not
// found, like an id of another tenant.
func PathUUID(c echo.Context, name, what string) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		return uuid.Nil, apperr.New(apperr.NotFound, "%s not found", what)
	}
	return id, nil
}

// TenantOf is the tenant the authenticated key acts for.
func TenantOf(c echo.Context) uuid.UUID {
	p, _ := PrincipalOf(c)
	return p.Key.TenantID
}
