package definition

import (
	"slices"

	"github.com/ductor/ductor/app/expr"
)

// SecretNames returns the tenant secrets the manifest references, sorted,
// each once: the names an http step's url_expr, headers_expr and
// body_expr call secret() with, its auth shorthand's secret (bearer, or
// basic's password), and a task step's secrets, in steps and in scatter
// templates alike. It reads a manifest as compiled or as read back from
// JSON.
func (m *Manifest) SecretNames() []string {
	var out []string
	for i := range m.Steps {
		out = appendSecretNames(out, string(m.Steps[i].Type), m.Steps[i].With)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func appendSecretNames(out []string, typ string, w map[string]any) []string {
	switch StepType(typ) {
	case TypeHTTP:
		for _, k := range []string{"url_expr", "headers_expr", "body_expr"} {
			if src, ok := w[k].(string); ok {
				out = append(out, expr.SecretCalls(src)...)
			}
		}
		if auth, ok := w["auth"].(map[string]any); ok {
			if name, ok := auth["bearer"].(string); ok && name != "" {
				out = append(out, name)
			}
			if basic, ok := auth["basic"].(map[string]any); ok {
				if name, ok := basic["password"].(string); ok && name != "" {
					out = append(out, name)
				}
			}
		}
	case TypeTask:
		out = append(out, stringsOf(w["secrets"])...)
	case TypeScatter:
		if do, ok := w["do"].(map[string]any); ok {
			t, _ := do["type"].(string)
			inner, _ := do["with"].(map[string]any)
			out = appendSecretNames(out, t, inner)
		}
	}
	return out
}

func stringsOf(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
