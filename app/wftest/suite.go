package wftest

import (
	"context"
	"fmt"
	"regexp"

	"github.com/ductor/ductor/app/definition"
)

// Result is one case's result.
type Result struct {
	File     string
	Name     string
	Outcome  *Outcome
	Failures []string
	// Err is set when the case could not be run.
	Err error
}

// Passed reports whether the case ran and met its expectation.
func (r Result) Passed() bool { return r.Err == nil && len(r.Failures) == 0 }

// RunFile runs the file's cases whose name match filter (nil: all).
func (r *Runner) RunFile(ctx context.Context, f *File, filter *regexp.Regexp) ([]Result, error) {
	return r.RunFileEach(ctx, f, filter, nil)
}

// RunFileEach is RunFile calling each (when not nil) as each case ends.
func (r *Runner) RunFileEach(ctx context.Context, f *File, filter *regexp.Regexp, each func(Result)) ([]Result, error) {
	doc, err := f.DefinitionDoc()
	if err != nil {
		return nil, err
	}
	m, err := Compile(doc)
	if err != nil {
		return nil, fmt.Errorf("definition: %w", err)
	}
	return r.RunCases(ctx, f, m, filter, each), nil
}

// RunCases runs the file's cases whose name match filter (nil: all)
// against m, an already compiled definition (the file's own is not
// read), calling each (when not nil) as each case ends.
func (r *Runner) RunCases(ctx context.Context, f *File, m *definition.Manifest, filter *regexp.Regexp, each func(Result)) []Result {
	var out []Result
	for i, c := range f.Tests {
		name := c.Name
		if name == "" {
			name = fmt.Sprint("test ", i+1)
		}
		if filter != nil && !filter.MatchString(name) {
			continue
		}
		res := r.runCase(ctx, f, m, c, name)
		if each != nil {
			each(res)
		}
		out = append(out, res)
	}
	return out
}

func (r *Runner) runCase(ctx context.Context, f *File, m *definition.Manifest, c Case, name string) Result {
	res := Result{File: f.Path, Name: name}
	start, err := startTime(f.Start, c.Start)
	if err != nil {
		res.Err = err
		return res
	}
	if res.Outcome, res.Err = r.Run(ctx, m, c, start); res.Err == nil {
		res.Failures = r.Check(ctx, res.Outcome, c.Expect)
	}
	return res
}

// RunDoc compiles a definition document (JSON or YAML) and runs one
// case of it.
func (r *Runner) RunDoc(ctx context.Context, doc []byte, c Case) (Result, error) {
	m, err := Compile(doc)
	if err != nil {
		return Result{}, fmt.Errorf("definition: %w", err)
	}
	return r.runCase(ctx, &File{}, m, c, orText(c.Name, "test")), nil
}
