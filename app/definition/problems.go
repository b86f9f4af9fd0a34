package definition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinels for errors.Is.
var (
	// ErrInvalid matches an [*InvalidError].
	ErrInvalid = errors.New("invalid definition")
	// ErrTooLarge: the document is over [MaxDocumentBytes].
	ErrTooLarge = errors.New("definition document too large")
)

// Problem is one thing wrong with a document: where (Path, e.g.
// "steps[3].with.items_expr"), in which step (its ref, when known), and
// what.
type Problem struct {
	Path    string `json:"path"`
	Step    string `json:"step,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// InvalidError lists every problem found in a document, in document
// order. It matches [ErrInvalid].
type InvalidError struct {
	Problems []Problem
}

func (e *InvalidError) Error() string {
	const shown = 3
	parts := make([]string, 0, shown+1)
	for i, p := range e.Problems {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Problems)-shown))
			break
		}
		parts = append(parts, p.String())
	}
	return "invalid definition: " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// path is a location in a document: "steps[3].with.items_expr".
type path string

func (p path) dot(name string) path {
	if p == "" {
		return path(name)
	}
	return p + "." + path(name)
}

func (p path) at(i int) path { return p + "[" + path(strconv.Itoa(i)) + "]" }

// problems collects problems in the order they are found.
type problems struct {
	list []Problem
}

func (ps *problems) add(p path, step, format string, args ...any) {
	ps.list = append(ps.list, Problem{Path: string(p), Step: step, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &InvalidError{Problems: ps.list}
}
