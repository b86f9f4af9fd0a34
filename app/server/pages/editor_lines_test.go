package pages

import (
	"github.com/ductor/ductor/app/definition"
	"slices"
	"testing"
)

// Each problem the editor shows is on a line of the document: a parse
// error where the parser stopped, a compiler problem at its key, or at
// the nearest key above it the document has.
func TestEditorProblemLines(t *testing.T) {
	yamlDoc := "key: k\nsteps:\n  - ref: a\n    type: task\n    with: {}\n  - ref: b\n    type: http\n    with:\n      url: 12\n      method: BREW\nedges:\n  - from: a\n    to: nowhere\n"
	jsonDoc := `{"key": "k",
 "steps": [
  {"ref": "a", "type": "task", "with": {}}
 ]}`
	for _, c := range []struct {
		name, src string
		path      []string
		want      []int
	}{
		{"keys", yamlDoc, []string{"steps[1].with.url", "steps[1].with.method", "edges[0].to", "steps[0].type"}, []int{9, 10, 13, 4}},
		{"a key left out is at its parent", yamlDoc, []string{"steps[0].with.handler", "steps[1].retry.max_attempts", "steps[7]"}, []int{5, 6, 2}},
		{"json", jsonDoc, []string{"steps[0].with.handler", "key"}, []int{3, 1}},
		{"unknown", yamlDoc, []string{"nothing", "edges"}, []int{0, 11}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []int
			for _, p := range c.path {
				got = append(got, problemLinesOf(c.src, p))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("lines of %v = %v, want %v", c.path, got, c.want)
			}
		})
	}

	for _, src := range []string{"key: k\nsteps:\n  - ref: a\n   type: task\n", "key: k\nsteps: [\n", "{\"key\": \"k\",\n \"steps\": [}\n"} {
		check := checkDocument("k", []byte(src))
		if len(check.Problems) == 0 || len(check.Lines) != len(check.Problems) || check.Lines[0] < 2 {
			t.Errorf("%q: problems %v on lines %v, want the first on line 2 or later", src, check.Problems, check.Lines)
		}
	}

	// A JSON document shown as YAML has its lines in the YAML too.
	check := checkDocument("k", []byte(`{"key":"k","steps":[{"ref":"a","type":"task","with":{}}]}`))
	if len(check.YAMLLines) != 1 || check.YAMLLines[0] < 3 || check.Lines[0] != 1 {
		t.Errorf("problems %v on lines %v, in the YAML %v\n%s", check.Problems, check.Lines, check.YAMLLines, check.YAML)
	}
}

func problemLinesOf(src, path string) int {
	return problemLines([]byte(src), []definition.Problem{{Path: path}})[0]
}
