package definition

import (
	"errors"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/expr"
)

// want is one expected problem: exact path and step, message substring.
type want struct {
	path, step, msg string
}

func compileDoc(t *testing.T, doc string) (*Compiled, error) {
	t.Helper()
	return Compile([]byte(doc), FormatAuto)
}

func mustCompile(t *testing.T, doc string) *Compiled {
	t.Helper()
	c, err := compileDoc(t, doc)
	if err != nil {
		t.Fatalf("Compile: %v\n%s", err, doc)
	}
	if err := ValidateSchema([]byte(doc), FormatAuto); err != nil {
		t.Fatalf("the compiler accepts a document DocumentSchema refuses: %v\n%s", err, doc)
	}
	return c
}

// assertProblems checks err lists exactly wants, in order.
func assertProblems(t *testing.T, err error, wants []want) {
	t.Helper()
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v, want *InvalidError", err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Error("InvalidError does not match ErrInvalid")
	}
	got := inv.Problems
	for i := 0; i < max(len(got), len(wants)); i++ {
		switch {
		case i >= len(got):
			t.Errorf("missing problem %d: %+v", i, wants[i])
		case i >= len(wants):
			t.Errorf("unexpected problem %d: %+v", i, got[i])
		case got[i].Path != wants[i].path || got[i].Step != wants[i].step || !strings.Contains(got[i].Message, wants[i].msg):
			t.Errorf("problem %d = {%s %q %q}\n            want {%s %q …%q…}", i,
				got[i].Path, got[i].Step, got[i].Message, wants[i].path, wants[i].step, wants[i].msg)
		}
	}
}

// one wraps step lines (YAML flow mappings) into a document.
func one(steps ...string) string {
	return "key: k\nsteps:\n  - " + strings.Join(steps, "\n  - ") + "\n"
}

// withEdges adds edge lines to a document.
func withEdges(doc string, edges ...string) string {
	return doc + "edges:\n  - " + strings.Join(edges, "\n  - ") + "\n"
}

// ruleCase is a document and the problems it must produce; none means it
// must compile.
type ruleCase struct {
	name string
	doc  string
	want []want
}

func runRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := compileDoc(t, tt.doc)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Compile: %v\n%s", err, tt.doc)
				}
				if c.Hash == "" || len(c.Manifest.Order) != len(c.Manifest.Steps) {
					t.Fatalf("incomplete result: %+v", c)
				}
				return
			}
			if err == nil {
				t.Fatalf("compiled, want problems %+v\n%s", tt.want, tt.doc)
			}
			assertProblems(t, err, tt.want)
		})
	}
}

func exprCache(env *expr.Env) *expr.Cache { return expr.NewCache(env, 4096) }
