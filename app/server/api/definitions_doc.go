package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
)

// readDocument reads a definition document from the request body, at most
// definition.MaxDocumentBytes: a larger declared length is refused before
// reading and the connection closed unread. The Content-Type picks the
// format: application/yaml, application/x-yaml and text/yaml are YAML,
// JSON types are JSON, and anything else (curl's form default included)
// is detected from the first byte.
func readDocument(c echo.Context) ([]byte, definition.Format, error) {
	r := c.Request()
	if r.ContentLength > definition.MaxDocumentBytes {
		// Closing the connection keeps net/http from draining the body.
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return nil, 0, documentTooLarge(nil)
	}
	doc, err := io.ReadAll(io.LimitReader(r.Body, definition.MaxDocumentBytes+1))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, 0, documentTooLarge(err)
	case err != nil:
		return nil, 0, apperr.Wrap(err, apperr.Invalid, "could not read the request body")
	case len(doc) > definition.MaxDocumentBytes:
		return nil, 0, documentTooLarge(nil)
	}
	return doc, definition.Detect(doc, formatOf(r.Header.Get(echo.HeaderContentType))), nil
}

func documentTooLarge(cause error) error {
	e := apperr.New(apperr.TooLarge, "a definition document is at most %d bytes", definition.MaxDocumentBytes)
	e.Err = cause
	return e
}

func formatOf(contentType string) definition.Format {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/yaml" || mt == "application/x-yaml" || mt == "text/yaml":
		return definition.FormatYAML
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return definition.FormatJSON
	}
	return definition.FormatAuto
}

// compileDocument compiles doc, turning the compiler's errors into API
// errors: every problem as details of a 422, or a 413.
func compileDocument(doc []byte, f definition.Format) (*definition.Compiled, error) {
	compiled, err := definition.Compile(doc, f)
	if err != nil {
		return nil, compileError(err)
	}
	return compiled, nil
}

func compileError(err error) error {
	var inv *definition.InvalidError
	switch {
	case errors.As(err, &inv):
		return invalidDefinition(inv.Problems)
	case errors.Is(err, definition.ErrTooLarge):
		return documentTooLarge(err)
	}
	return err
}

func invalidDefinition(problems []definition.Problem) error {
	inv := &definition.InvalidError{Problems: problems}
	return apperr.New(apperr.InvalidDefinition, "%s", inv.Error()).WithDetails(problems)
}

// keyedDocument makes doc's key the one in the URL: filled in when the
// document has none, a problem when it names another.
func keyedDocument(doc []byte, f definition.Format, key string) ([]byte, error) {
	got, present, err := definition.DocumentKey(doc, f)
	if err != nil {
		return nil, compileError(err)
	}
	if !present {
		return definition.WithKey(doc, f, key), nil
	}
	if got != key {
		return nil, invalidDefinition([]definition.Problem{{
			Path: "key", Message: fmt.Sprintf("the document's key %q does not match %q in the URL", got, key),
		}})
	}
	return doc, nil
}
