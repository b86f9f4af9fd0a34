package definition

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A schema's problems read as words, not as the schema's keywords.
func TestInputProblemsReadAsWords(t *testing.T) {
	m := &Manifest{InputSchema: json.RawMessage(`{"type": "object", "required": ["name"], "properties": {
		"name": {"type": "string", "minLength": 10}, "count": {"type": "integer", "maximum": 5},
		"tier": {"enum": ["free", "pro"]}, "tags": {"type": "array", "minItems": 2}}}`)}
	err := ValidateInput(m, map[string]any{"name": "ab", "count": int64(9), "tier": "gold", "tags": []any{}})
	if err == nil {
		t.Fatal("no problem found")
	}
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("not an InputError: %v", err)
	}
	var lines []string
	for _, p := range ie.Problems {
		lines = append(lines, p.Path+": "+p.Message)
	}
	got := strings.Join(lines, "; ")
	for _, want := range []string{"must be at least 10 characters (it has 2)", "must be at most 5", "must be one of free, pro", "must have at least 2 items (it has 0)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the problems %q do not say %q", got, want)
		}
	}
	if err := ValidateInput(m, map[string]any{"count": "x"}); err == nil || !strings.Contains(err.Error(), "missing property 'name'") || !strings.Contains(err.Error(), "must be integer, not string") {
		t.Errorf("missing and mistyped: %v", err)
	}
}
