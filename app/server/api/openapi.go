package api

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/definition"
)

// openAPISource is the API's OpenAPI 3.1 description as written: its
// Document schema refers to the definition schema the API serves beside
// it. TestOpenAPI* keep it and the routes in step: every /api/v1 route is
// documented, and every documented operation is a route.
//
//go:embed openapi.json
var openAPISource []byte

// OpenAPIDocument is what the API serves: the source with the definition
// schema inlined as Document (its $defs as Document* components), so
// that client generators need no second fetch.
var OpenAPIDocument = mustInlineDefinitionSchema(openAPISource, definition.DocumentSchema())

// HandleOpenAPI serves the API's description. It is documentation, so it
// needs no API key.
func HandleOpenAPI() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, OpenAPIDocument)
	}
}

// HandleDefinitionSchema serves the JSON Schema of definition documents,
// for editors; no API key needed.
func HandleDefinitionSchema() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, definition.DocumentSchema())
	}
}

func mustInlineDefinitionSchema(src, defSchema []byte) []byte {
	out, err := inlineDefinitionSchema(src, defSchema)
	if err != nil {
		panic("server: openapi.json: " + err.Error())
	}
	return out
}

// inlineDefinitionSchema replaces components.schemas.Document with the
// definition schema.
func inlineDefinitionSchema(src, defSchema []byte) ([]byte, error) {
	var doc, def map[string]any
	if err := json.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(defSchema, &def); err != nil {
		return nil, err
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	defs, _ := def["$defs"].(map[string]any)
	delete(def, "$defs")
	delete(def, "$schema")
	for name, s := range defs {
		schemas[documentComponent(name)] = rewriteRefs(s)
	}
	schemas["Document"] = rewriteRefs(def)
	b, err := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n'), err
}

// documentComponent names a definition $def as a component: with_event_set
// is DocumentWithEventSet.
func documentComponent(def string) string {
	var b strings.Builder
	b.WriteString("Document")
	for _, part := range strings.Split(def, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// rewriteRefs points #/$defs/NAME references at the components.
func rewriteRefs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				if name, isDef := strings.CutPrefix(s, "#/$defs/"); isDef {
					x[k] = "#/components/schemas/" + documentComponent(name)
				}
				continue
			}
			x[k] = rewriteRefs(e)
		}
	case []any:
		for i, e := range x {
			x[i] = rewriteRefs(e)
		}
	}
	return v
}
