package pages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/definition"
)

// editorCheck is what the editor knows about a document after the server
// read and compiled it: the document as JSON (for the graph) and as YAML
// (for the text pane), and either the manifest or every problem.
type editorCheck struct {
	Document json.RawMessage      `json:"document"` // null when the source does not parse
	YAML     string               `json:"yaml"`
	Manifest *definition.Manifest `json:"manifest"`
	Hash     string               `json:"hash"`
	Problems []definition.Problem `json:"problems"`
	// Cycles are the steps on each cycle the compiler found.
	Cycles [][]string `json:"cycles"`
	// Lines is the line of each problem in the document as posted, 0 when
	// unknown; YAMLLines the same in YAML (they differ for a JSON source).
	Lines     []int `json:"lines"`
	YAMLLines []int `json:"yaml_lines"`
}

// Valid reports whether the document compiled.
func (e editorCheck) Valid() bool { return e.Manifest != nil }

// handleEditorCheck compiles the posted document for the editor without
// storing anything: the editor posts every change, debounced.
func handleEditorCheck() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, checkDocument(c.Param("key"), []byte(c.FormValue("document"))))
	}
}

// checkDocument converts src (JSON or YAML) to both forms and compiles it
// under key: a document without a key takes it, one with another key is a
// problem. A YAML source is kept as written; a JSON one is shown as YAML.
func checkDocument(key string, src []byte) editorCheck {
	out := editorCheck{Problems: []definition.Problem{}, Cycles: [][]string{}}
	if len(src) > definition.MaxDocumentBytes {
		out.Problems = append(out.Problems, definition.Problem{Message: definition.ErrTooLarge.Error()})
		out.Lines, out.YAMLLines = []int{0}, []int{0}
		return out
	}
	f := definition.Detect(src, definition.FormatAuto)
	err := out.convert(src, f)
	out.compile(key, src, f)
	if err != nil { // the compiler's own message is better when it has one
		if len(out.Problems) == 0 {
			out.Problems = append(out.Problems, definition.Problem{Message: err.Error()})
		}
		out.Manifest, out.Hash = nil, ""
	}
	out.locate(src, f)
	return out
}

// locate finds each problem's line in the source and in its YAML.
func (e *editorCheck) locate(src []byte, f definition.Format) {
	e.Lines = problemLines(src, e.Problems)
	e.YAMLLines = e.Lines
	if f == definition.FormatJSON && e.YAML != "" {
		e.YAMLLines = problemLines([]byte(e.YAML), e.Problems)
	}
}

// convert fills Document and YAML from the source.
func (e *editorCheck) convert(src []byte, f definition.Format) error {
	if f == definition.FormatJSON {
		var v any
		if err := yaml.UnmarshalWithOptions(src, &v, yaml.UseOrderedMap()); err != nil || !json.Valid(src) {
			return fmt.Errorf("the document is not valid JSON")
		}
		y, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("convert to YAML: %w", err)
		}
		e.Document, e.YAML = compactJSON(src), string(y)
		return nil
	}
	e.YAML = string(src)
	if err := definition.CheckYAMLAliases(src); err != nil {
		return err
	}
	j, err := yaml.YAMLToJSON(src)
	if err != nil {
		return fmt.Errorf("YAML: %s", firstLine(err.Error()))
	}
	if !json.Valid(j) { // a NUL in a string, which the compiler reports
		return errors.New("the document cannot be shown as JSON")
	}
	if !bytes.HasPrefix(bytes.TrimSpace(j), []byte("{")) {
		return errors.New("the document must be a mapping (key: …, steps: …)")
	}
	e.Document = compactJSON(j)
	return nil
}

func compactJSON(j []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, j); err != nil {
		return j
	}
	return b.Bytes()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// compile compiles the source with the page's key and records the result.
func (e *editorCheck) compile(key string, src []byte, f definition.Format) {
	got, present, err := definition.DocumentKey(src, f)
	switch {
	case err == nil && !present:
		src = definition.WithKey(src, f, key)
	case err == nil && got != key:
		e.Problems = append(e.Problems, definition.Problem{
			Path: "key", Message: fmt.Sprintf("the document's key %q does not match this definition's key %q", got, key),
		})
	}
	compiled, err := definition.Compile(src, f)
	var inv *definition.InvalidError
	switch {
	case errors.As(err, &inv):
		e.Problems = append(e.Problems, inv.Problems...)
		e.Cycles = cyclesOf(inv.Problems)
	case err != nil:
		e.Problems = append(e.Problems, definition.Problem{Message: err.Error()})
	case len(e.Problems) == 0:
		e.Manifest, e.Hash = compiled.Manifest, compiled.Hash
	}
}

// cyclePrefix starts the compiler's message for a cycle, which names the
// steps on it.
const cyclePrefix = "cycle through steps "

func cyclesOf(ps []definition.Problem) [][]string {
	out := [][]string{}
	for _, p := range ps {
		if refs, ok := strings.CutPrefix(p.Message, cyclePrefix); ok && p.Path == "edges" {
			out = append(out, strings.Split(refs, ", "))
		}
	}
	return out
}
