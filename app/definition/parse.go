package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Format is a document's encoding.
type Format int

const (
	// FormatAuto treats a document whose first non-blank byte is '{' as
	// JSON and anything else as YAML.
	FormatAuto Format = iota
	FormatJSON
	FormatYAML
)

// MaxDocumentBytes caps a definition document.
const MaxDocumentBytes = 1 << 20

// maxNodes caps the values a document may expand to; YAML aliases can
// otherwise turn a small document into an enormous tree.
const maxNodes = 1 << 20

// parse decodes a document into a JSON-shaped tree: map[string]any, []any,
// string, bool, nil and json.Number.
func parse(doc []byte, f Format) (any, error) {
	if len(doc) > MaxDocumentBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(doc), MaxDocumentBytes)
	}
	if err := rawNULProblem(doc); err != nil {
		return nil, err
	}
	if f == FormatAuto {
		f = sniff(doc)
	}
	tree, err := parseFormat(doc, f)
	if err != nil {
		return nil, err
	}
	if err := nulProblems(tree); err != nil {
		return nil, err
	}
	return tree, nil
}

func parseFormat(doc []byte, f Format) (any, error) {
	if f == FormatJSON {
		return parseJSON(doc)
	}
	return parseYAML(doc)
}

func sniff(doc []byte) Format {
	if t := bytes.TrimLeft(doc, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		return FormatJSON
	}
	return FormatYAML
}

func syntaxError(format string, args ...any) error {
	return &InvalidError{Problems: []Problem{{Message: fmt.Sprintf(format, args...)}}}
}

// parseJSON reads strictly: valid UTF-8, no duplicate names, one value.
func parseJSON(doc []byte) (any, error) {
	v, err := readJSON(doc)
	if err != nil {
		return nil, syntaxError("JSON: %v", err)
	}
	return v, nil
}

func parseYAML(doc []byte) (any, error) {
	if err := CheckYAMLAliases(doc); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, syntaxError("document is empty")
		}
		return nil, syntaxError("YAML: %s", firstLine(err.Error()))
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, syntaxError("YAML: a definition is a single document")
	}
	n := 0
	out, err := jsonShape(v, "", &n)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// jsonShape converts a decoded YAML value to the shapes JSON decoding
// gives, failing on values JSON cannot hold.
func jsonShape(v any, p path, n *int) (any, error) {
	if *n++; *n > maxNodes {
		return nil, syntaxError("YAML: the document expands to more than %d values", maxNodes)
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, err := jsonShape(e, p.dot(k), n)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := jsonShape(e, p.at(i), n)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return scalarShape(v, p)
}

func scalarShape(v any, p path) (any, error) {
	switch x := v.(type) {
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case int:
		return json.Number(strconv.Itoa(x)), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, &InvalidError{Problems: []Problem{{Path: string(p), Message: "numbers must be finite"}}}
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	}
	return nil, &InvalidError{Problems: []Problem{{Path: string(p), Message: fmt.Sprintf("unsupported YAML value of type %T", v)}}}
}
