package wftest

import (
	"bytes"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/ductor/ductor/app/jsonvalue"
)

// Update returns the file's text with the expect of each case in results
// that did not pass (a case without one included) rewritten with what was
// observed, the rest of the file, its comments included, kept as it was.
// The caller writes it.
func Update(f *File, results []Result) ([]byte, error) {
	file, err := parser.ParseBytes(f.Raw, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	byName := map[string]*Outcome{}
	for _, r := range results {
		if r.Err == nil && !r.Passed() {
			byName[r.Name] = r.Outcome
		}
	}
	for i, c := range f.Tests {
		o := byName[orText(c.Name, fmt.Sprint("test ", i+1))]
		if o == nil {
			continue
		}
		if err := setExpect(file, i, c.Expect != nil, o.Observed()); err != nil {
			return nil, fmt.Errorf("%s: test %d: %w", f.Path, i+1, err)
		}
	}
	return []byte(file.String() + "\n"), nil
}

func setExpect(file *ast.File, i int, exists bool, e *Expect) error {
	js, err := jsonvalue.Marshal(e)
	if err != nil {
		return err
	}
	if !exists {
		js = append(append([]byte(`{"expect":`), js...), '}')
	}
	doc, err := yaml.JSONToYAML(js)
	if err != nil {
		return err
	}
	if !exists {
		p, err := yaml.PathString(fmt.Sprintf("$.tests[%d]", i))
		if err != nil {
			return err
		}
		return p.MergeFromReader(file, bytes.NewReader(doc))
	}
	p, err := yaml.PathString(fmt.Sprintf("$.tests[%d].expect", i))
	if err != nil {
		return err
	}
	return p.ReplaceWithReader(file, bytes.NewReader(doc))
}
