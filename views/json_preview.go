package views

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
)

// Bounds of a JSON preview: pages show at most previewBytes of a value,
// previewDepth levels deep, so a page stays small and fast whatever a run
// carries; the whole value is behind a download link.
const (
	previewBytes = 16 << 10
	previewDepth = 12
)

// JSONPreview is a value as a page shows it: indented, and cut short
// when it is larger or deeper than the bounds.
type JSONPreview struct {
	Text      string
	Truncated bool
}

// previewJSON renders v for a <pre> block in time linear in what it
// writes: indentation stops growing at previewDepth, where nesting is
// elided, and writing stops at previewBytes.
func previewJSON(v any) JSONPreview {
	w := &previewWriter{limit: previewBytes}
	w.value(v, 0)
	if w.cut {
		w.b.WriteString("\n… (preview cut short)")
	}
	return JSONPreview{Text: w.b.String(), Truncated: w.cut}
}

type previewWriter struct {
	b     strings.Builder
	limit int
	cut   bool
}

func (w *previewWriter) full() bool {
	if w.b.Len() >= w.limit {
		w.cut = true
	}
	return w.cut
}

func (w *previewWriter) newline(depth int) {
	w.b.WriteByte('\n')
	w.b.WriteString(strings.Repeat("  ", min(depth, previewDepth)))
}

func (w *previewWriter) value(v any, depth int) {
	if w.full() {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		w.object(x, depth)
	case []any:
		w.array(x, depth)
	case nil:
		w.b.WriteString("null")
	case string:
		w.str(x)
	case bool:
		w.b.WriteString(strconv.FormatBool(x))
	case float64:
		w.b.WriteString(previewDouble(x))
	case json.Number:
		w.b.WriteString(x.String())
	case int, int64, int32, uint, uint64, uint32:
		fmt.Fprint(&w.b, x)
	default:
		w.other(x, depth)
	}
}

func (w *previewWriter) object(m map[string]any, depth int) {
	if len(m) == 0 {
		w.b.WriteString("{}")
		return
	}
	if depth >= previewDepth {
		w.b.WriteString("{…}")
		w.cut = true
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.b.WriteByte('{')
	for i, k := range keys {
		if w.full() {
			return
		}
		if i > 0 {
			w.b.WriteByte(',')
		}
		w.newline(depth + 1)
		w.str(k)
		w.b.WriteString(": ")
		w.value(m[k], depth+1)
	}
	w.newline(depth)
	w.b.WriteByte('}')
}

func (w *previewWriter) array(a []any, depth int) {
	if len(a) == 0 {
		w.b.WriteString("[]")
		return
	}
	if depth >= previewDepth {
		w.b.WriteString("[…]")
		w.cut = true
		return
	}
	w.b.WriteByte('[')
	for i, x := range a {
		if w.full() {
			return
		}
		if i > 0 {
			w.b.WriteByte(',')
		}
		w.newline(depth + 1)
		w.value(x, depth+1)
	}
	w.newline(depth)
	w.b.WriteByte(']')
}

// str writes a string quoted, at most the room left of it.
func (w *previewWriter) str(s string) {
	if room := w.limit - w.b.Len(); len(s) > room {
		s = s[:max(room, 0)]
		w.cut = true
	}
	raw, _ := json.Marshal(s)
	w.b.Write(raw)
}

// other renders a value of another Go type (a struct, a typed map) by
// its JSON, decoded again so that the bounds apply.
func (w *previewWriter) other(v any, depth int) {
	raw, err := json.Marshal(v)
	if err != nil {
		w.str(fmt.Sprint(v))
		return
	}
	var plain any
	if err := json.Unmarshal(raw, &plain); err != nil {
		w.str(string(raw))
		return
	}
	w.value(plain, depth)
}

// runJSONURL is where a run's input or output (part) downloads whole.
func runJSONURL(slug string, id uuid.UUID, part string) string {
	return runURL(slug, id) + "/json/" + part
}

// nodeJSONURL is where a node's output downloads whole.
func nodeJSONURL(slug string, id uuid.UUID, node string) string {
	return runURL(slug, id) + "/json/nodes/" + url.PathEscape(node)
}

// attemptJSONURL is where an attempt's output downloads whole.
func attemptJSONURL(slug string, id uuid.UUID, a engine.Attempt) string {
	return nodeJSONURL(slug, id, a.Node) + "/attempts/" + strconv.Itoa(a.Generation) + "/" + strconv.Itoa(a.Attempt)
}

// signalJSONURL is where a signal's payload downloads whole.
func signalJSONURL(slug string, id uuid.UUID, requestID string) string {
	return runURL(slug, id) + "/json/signals?request_id=" + url.QueryEscape(requestID)
}

// caseJSONURL is where a case's data downloads whole.
func caseJSONURL(slug string, id uuid.UUID) string {
	return tenantURL(slug, "/inbox/cases/"+id.String()+"/data")
}

// previewDouble writes a double as the API does, with its fraction (2.0),
// so a page shows the kind of number a run holds.
func previewDouble(f float64) string {
	if s, err := jsonvalue.FormatDouble(f); err == nil {
		return s
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
