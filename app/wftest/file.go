package wftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/ductor/ductor/app/jsonvalue"
)

// File is one *.test.yaml file: a definition and the cases run against
// it.
type File struct {
	// Path is where the file was read from; definition paths are
	// relative to its folder.
	Path string `json:"-"`
	// Raw is the file's text, which Update rewrites.
	Raw []byte `json:"-"`
	// Definition is the definition document embedded (a mapping) or the
	// path of a definition file (a string).
	Definition json.RawMessage `json:"definition"`
	// Start is the virtual time runs start at (RFC 3339); default
	// 2026-01-01T00:00:00Z.
	Start string `json:"start,omitempty"`
	Tests []Case `json:"tests"`
}

// Case is one test: a run's input, what the outside world answers, and
// what the run must come to.
type Case struct {
	Name  string `json:"name"`
	Input any    `json:"input,omitempty"`
	// Start overrides the file's start time.
	Start string `json:"start,omitempty"`
	// Mocks answer worker steps and sync subworkflows by ref, or by
	// scatter child (REF[KEY] or REF[INDEX]); see Mock.
	Mocks   map[string]MockList `json:"mocks,omitempty"`
	Deliver []Delivery          `json:"deliver,omitempty"`
	Expect  *Expect             `json:"expect,omitempty"`
}

// MockList answers successive attempts: entry N answers attempt N+1,
// the last one every attempt after it. A single mapping is a list of
// one.
type MockList []Mock

// UnmarshalJSON accepts a mapping or a list of them.
func (l *MockList) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var m Mock
		if err := jsonvalue.UnmarshalStrict(t, &m); err != nil {
			return err
		}
		*l = MockList{m}
		return nil
	}
	var ms []Mock
	if err := jsonvalue.UnmarshalStrict(b, &ms); err != nil {
		return err
	}
	*l = ms
	return nil
}

// Mock is one attempt's answer: success with Output (or OutputExpr), a
// failure with Error, or a timeout. After is how long the attempt takes
// in virtual time (a timeout takes the step's timeout).
type Mock struct {
	Output any `json:"output,omitempty"`
	// OutputExpr is a CEL expression for the output: `input` is the
	// step's evaluated `with` (the dispatched parameters), `item`,
	// `index` and `key` a scatter child's.
	OutputExpr string     `json:"output_expr,omitempty"`
	Error      *MockError `json:"error,omitempty"`
	Timeout    bool       `json:"timeout,omitempty"`
	After      string     `json:"after,omitempty"`
	// Status is a subworkflow child run's end status (default succeeded,
	// or failed with Error).
	Status string `json:"status,omitempty"`
}

// MockError is a failed attempt's error.
type MockError struct {
	Code      string `json:"code"`
	Message   string `json:"message,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
}

// Delivery is something the outside world sends the run at a virtual
// time: At is a duration after the start ("90m", "72h") or an RFC 3339
// instant; empty means at the start. An approval or a case update waits
// until its node has opened one.
type Delivery struct {
	At       string          `json:"at,omitempty"`
	Signal   *SignalDelivery `json:"signal,omitempty"`
	Event    *EventDelivery  `json:"event,omitempty"`
	Approval *ApprovalInput  `json:"approval,omitempty"`
	Case     *CaseInput      `json:"case,omitempty"`
	// Cancel cancels the run with this reason; CancelNode cancels one
	// node; Retry retries a node (an operator's retry-from-node).
	Cancel     string `json:"cancel,omitempty"`
	CancelNode string `json:"cancel_node,omitempty"`
	Retry      string `json:"retry,omitempty"`
}

// SignalDelivery sends a signal.
type SignalDelivery struct {
	Name    string `json:"name"`
	Payload any    `json:"payload,omitempty"`
}

// EventDelivery publishes a tenant event.
type EventDelivery struct {
	Name string `json:"name"`
	Data any    `json:"data,omitempty"`
}

// ApprovalInput is one person's decision on the approval node Node.
type ApprovalInput struct {
	Node     string `json:"node"`
	Approved bool   `json:"approved"`
	By       string `json:"by,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// CaseInput moves the human_loop case of Node to Status with Data.
type CaseInput struct {
	Node   string `json:"node"`
	Status string `json:"status"`
	Data   any    `json:"data,omitempty"`
}

// DefaultStart is the virtual instant runs start at unless a file says.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Load reads and parses a test file.
func Load(path string) (*File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// Parse parses a test file's YAML (or JSON).
func Parse(raw []byte) (*File, error) {
	f, err := parse(raw)
	if err != nil {
		return nil, err
	}
	f.Raw = raw
	return f, nil
}

// ParseCases parses a test file's text whose definition is given apart
// (the document open in the editor): a definition the text names is
// ignored, and the text may be the cases' list alone. Update rewrites
// the text as given.
func ParseCases(raw []byte, definition json.RawMessage) (*File, error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	var top map[string]json.RawMessage
	if t := bytes.TrimSpace(js); len(t) > 0 && t[0] == '[' {
		top = map[string]json.RawMessage{"tests": t}
	} else if err := json.Unmarshal(js, &top); err != nil || top == nil {
		return nil, fmt.Errorf("parse: the tests must be a mapping with a tests list, or the list alone")
	}
	top["definition"] = definition
	whole, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	f, err := parse(whole)
	if err != nil {
		return nil, err
	}
	f.Raw = raw
	return f, nil
}

func parse(raw []byte) (*File, error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	var f File
	if err := jsonvalue.UnmarshalStrict(js, &f); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(f.Definition) == 0 {
		return nil, fmt.Errorf("parse: no definition")
	}
	return &f, nil
}

// DefinitionDoc returns the definition document: the embedded one as
// JSON, or the named file's contents.
func (f *File) DefinitionDoc() ([]byte, error) {
	var path string
	if json.Unmarshal(f.Definition, &path) != nil {
		return f.Definition, nil
	}
	if !filepath.IsAbs(path) && f.Path != "" {
		path = filepath.Join(filepath.Dir(f.Path), path)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("definition: %w", err)
	}
	return doc, nil
}

// Find lists the *.test.yaml files under each path (a file is taken as
// is), sorted within each folder; hidden folders and node_modules are
// skipped.
func Find(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules"):
				return filepath.SkipDir
			case !d.IsDir() && strings.HasSuffix(path, ".test.yaml"):
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// startTime resolves the case's start, else the file's, else DefaultStart.
func startTime(file, c string) (time.Time, error) {
	s := c
	if s == "" {
		s = file
	}
	if s == "" {
		return DefaultStart, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("start: %w", err)
	}
	return t.UTC(), nil
}

// at resolves a delivery's At against the start.
func at(start time.Time, s string) (time.Time, error) {
	if s == "" {
		return start, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return start.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("at %q: a duration (90m, 72h) or an RFC 3339 time", s)
	}
	return t.UTC(), nil
}
