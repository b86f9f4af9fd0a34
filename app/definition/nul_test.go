package definition

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestNULRefusedEverywhere(t *testing.T) {
	t.Parallel()
	doc := `{"key": "k", "name": "n\u0000", "description": "d\u0000",
	  "labels": {"team": "x\u0000", "a\u0000b": "y"},
	  "steps": [{"ref": "a\u0000", "type": "transform", "with": {"expr": "'\u0000'", "deep": ["ok", "\u0000"]}}]}`
	_, err := Compile([]byte(doc), FormatJSON)
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v, want InvalidError", err)
	}
	got := map[string]bool{}
	for _, p := range inv.Problems {
		got[p.Path] = strings.Contains(p.Message, "NUL")
	}
	for _, want := range []string{"name", "description", "labels.team", "labels", "steps[0].ref", "steps[0].with.expr", "steps[0].with.deep[1]"} {
		if !got[want] {
			t.Errorf("no NUL problem at %q in %+v", want, inv.Problems)
		}
	}
}

func TestNULInYAMLEscape(t *testing.T) {
	t.Parallel()
	_, err := Compile([]byte(one(`{ref: a, type: transform, with: {expr: "'x\0'"}}`)), FormatYAML)
	var inv *InvalidError
	if !errors.As(err, &inv) || len(inv.Problems) != 1 || inv.Problems[0].Path != "steps[0].with.expr" {
		t.Fatalf("err = %v, want one problem at steps[0].with.expr", err)
	}
}

// aliasBomb is a small document whose aliases stand for 10^(levels+1)
// values.
func aliasBomb(levels int) string {
	bomb := "key: k\na: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for i := range levels {
		n := fmt.Sprintf("b%d", i)
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = n
	}
	return bomb
}

func TestYAMLAliasesBoundedBeforeDecoding(t *testing.T) {
	t.Parallel()
	// 10^5 values: under the decoder's own node cap, over the aliases'.
	for _, levels := range []int{4, 8, 40} {
		err := CheckYAMLAliases([]byte(aliasBomb(levels)))
		var inv *InvalidError
		if !errors.As(err, &inv) || !strings.Contains(inv.Problems[0].Message, "aliases expand the document") {
			t.Fatalf("levels %d: err = %v", levels, err)
		}
	}
	// A few ordinary aliases are fine.
	doc := "key: k\nx-retry: &r {max_attempts: 3}\nsteps:\n  - {ref: a, type: task, with: {handler: h}, retry: *r}\n  - {ref: b, type: task, with: {handler: h}, retry: *r}\n"
	if err := CheckYAMLAliases([]byte(doc)); err != nil {
		t.Fatalf("ordinary aliases refused: %v", err)
	}
}
