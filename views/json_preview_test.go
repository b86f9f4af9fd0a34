package views

import (
	"strings"
	"testing"
)

func TestPreviewJSONIsBounded(t *testing.T) {
	t.Parallel()
	var deep any = []any{}
	for range 9000 {
		deep = []any{deep}
	}
	wide := make([]any, 1_000_000)
	for i := range wide {
		wide[i] = map[string]any{"i": float64(i)}
	}
	for name, v := range map[string]any{"deep": deep, "wide": wide, "long string": strings.Repeat("x", 1<<20)} {
		p := previewJSON(v)
		if !p.Truncated || len(p.Text) > previewBytes+previewDepth*2+64 {
			t.Errorf("%s: %d bytes, truncated %v", name, len(p.Text), p.Truncated)
		}
	}
}

func TestPreviewJSONShowsSmallValuesWhole(t *testing.T) {
	t.Parallel()
	p := previewJSON(map[string]any{"b": []any{1.0, "two", nil}, "a": map[string]any{}, "c": true})
	want := "{\n  \"a\": {},\n  \"b\": [\n    1.0,\n    \"two\",\n    null\n  ],\n  \"c\": true\n}"
	if p.Truncated || p.Text != want {
		t.Fatalf("preview = %q (truncated %v), want %q", p.Text, p.Truncated, want)
	}
}
