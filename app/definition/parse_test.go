package definition

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	t.Parallel()
	bomb := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for i := range 8 {
		n := fmt.Sprintf("b%d", i)
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = n
	}
	tests := []struct {
		name string
		doc  string
		f    Format
		msg  string
	}{
		{"JSON syntax", `{"key": "k", "steps": [}`, FormatAuto, "JSON: "},
		{"JSON duplicate name", `{"key": "k", "key": "j", "steps": []}`, FormatJSON, `duplicate object member name "key"`},
		{"JSON trailing data", `{"key": "k"} {}`, FormatJSON, "unexpected data after the value"},
		{"YAML syntax", "key: [k\n", FormatYAML, "YAML: "},
		{"YAML duplicate key", "key: k\nkey: j\n", FormatYAML, `mapping key "key" already defined`},
		{"YAML two documents", "key: k\n---\nkey: j\n", FormatYAML, "single document"},
		{"empty", "", FormatYAML, "document is empty"},
		{"YAML alias expansion", bomb, FormatYAML, "aliases expand the document"},
		{"NUL byte", "key: k\n# \x00\nsteps: []\n", FormatYAML, "NUL byte (line 2)"},
		{"YAML infinity", "key: k\nsteps:\n  - {ref: a, type: task, with: {handler: h, n: .inf}}\n", FormatYAML, "finite"},
		{"YAML binary", "key: !!binary aGVsbG8=\n", FormatYAML, "unsupported YAML value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile([]byte(tt.doc), tt.f)
			var inv *InvalidError
			if !errors.As(err, &inv) || len(inv.Problems) != 1 || !strings.Contains(inv.Problems[0].Message, tt.msg) {
				t.Fatalf("err = %v, want one problem containing %q", err, tt.msg)
			}
		})
	}
}

func TestDocumentTooLarge(t *testing.T) {
	t.Parallel()
	doc := one(taskA) + "description: " + strings.Repeat("x", MaxDocumentBytes) + "\n"
	if _, err := Compile([]byte(doc), FormatYAML); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestYAMLTimestampsStayStrings(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, one(`{ref: a, type: wait, with: {until: 2030-01-02T03:04:05Z}}`))
	if got := c.Manifest.Steps[0].With["until"]; got != "2030-01-02T03:04:05Z" {
		t.Errorf("until = %#v", got)
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"90s", 90 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"PT90S", 90 * time.Second},
		{"PT1H30M", 90 * time.Minute},
		{"P1D", 24 * time.Hour},
		{"P1DT2H", 26 * time.Hour},
		{"P2W", 14 * 24 * time.Hour},
		{"PT0.5S", 500 * time.Millisecond},
		{"pt1m", time.Minute},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "P1Y", "P1M", "P1DT", "1 hour", "PT1H2", "90"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) succeeded", bad)
		}
	}
}
