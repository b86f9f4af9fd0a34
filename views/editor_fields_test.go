package views

import (
	"slices"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/definition"
)

// The workflow settings cover every definition-wide field the compiler
// accepts but those the editor edits elsewhere (steps, edges, the
// layout) or not at all (the key, fixed by the page), and name no other;
// limits.* name the compiler's limits.
func TestWorkflowFieldsMatchTheCompiler(t *testing.T) {
	t.Parallel()
	elsewhere := []string{"key", "steps", "edges", "layout"}
	shown := map[string]bool{}
	for _, f := range WorkflowFields {
		top, sub, dotted := strings.Cut(f.Name, ".")
		df, ok := fieldNamed(definition.DocumentFields, top)
		if !ok || slices.Contains(elsewhere, top) {
			t.Errorf("workflow setting %s is no document field the panel should edit", f.Name)
			continue
		}
		if dotted {
			if _, ok := fieldNamed(df.Fields, sub); !ok {
				t.Errorf("%s: %s has no field %s", f.Name, top, sub)
			}
		}
		shown[top] = true
	}
	for _, f := range definition.DocumentFields {
		if !shown[f.Name] && !slices.Contains(elsewhere, f.Name) {
			t.Errorf("document field %s has no workflow setting", f.Name)
		}
	}
	for _, f := range definition.LimitsFields {
		if !slices.ContainsFunc(WorkflowFields, func(w StepField) bool { return w.Name == "limits."+f.Name }) {
			t.Errorf("limits.%s has no workflow setting", f.Name)
		}
	}
}

// Every with field of a step kind is one the compiler accepts for its
// type, and a task's secrets and an http step's auth and headers_expr
// are among them.
func TestStepKindFieldsAreTheCompilers(t *testing.T) {
	t.Parallel()
	for _, k := range StepKinds {
		i := slices.IndexFunc(definition.WithSpecs, func(s definition.WithSpec) bool { return string(s.Type) == k.Type })
		if i < 0 {
			t.Errorf("%s: no with spec", k.Type)
			continue
		}
		for _, f := range k.Fields {
			top, _, _ := strings.Cut(f.Name, ".")
			if _, ok := definition.WithSpecs[i].Field(top); !ok {
				t.Errorf("%s: with.%s is not the compiler's", k.Type, f.Name)
			}
		}
	}
	want := map[string][]string{"task": {"secrets"}, "http": {"auth", "headers_expr"}}
	for _, k := range StepKinds {
		for _, name := range want[k.Type] {
			if !slices.ContainsFunc(k.Fields, func(f StepField) bool { return f.Name == name }) {
				t.Errorf("%s has no %s field", k.Type, name)
			}
		}
	}
}

func fieldNamed(fs []definition.Field, name string) (definition.Field, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return definition.Field{}, false
}
