package docs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// block is a fenced code block of a Markdown file.
type block struct {
	file string
	line int // of the opening fence
	lang string
	body string
	// marker is the <!-- run: … --> comment on the line before the
	// fence, if any.
	marker    *runMarker
	markerErr error
}

// runMarker says how to run an example and what it must end with.
type runMarker struct {
	Input  any    `json:"input"`
	Status string `json:"status"`
	// Secrets are set in the file's tenant (PUT /secrets/NAME) before
	// the run starts.
	Secrets map[string]string `json:"secrets"`
	// Output, when set, must equal the run's output.
	Output any `json:"output"`
	// Signals, Events, Approve and Case are sent while the run waits for
	// them: a signal or event when a node waits for its name (an
	// event_set takes any event), a decision on the run's approvals, an
	// update of its cases.
	Signals []struct {
		Name    string `json:"name"`
		Payload any    `json:"payload"`
	} `json:"signals"`
	Events []struct {
		Name string `json:"name"`
		Data any    `json:"data"`
	} `json:"events"`
	Approve *bool `json:"approve"`
	Case    *struct {
		Status string `json:"status"`
		Data   any    `json:"data"`
	} `json:"case"`
}

var markerLine = regexp.MustCompile(`^\s*<!--\s*run:\s*(\{.*\})\s*-->\s*$`)

// blocks lists a Markdown file's fenced code blocks.
func blocks(file string) ([]block, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out      []block
		cur      *block
		fence    string
		previous string
		n        int
		body     strings.Builder
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			fence = trimmed[:strings.LastIndex(trimmed, "`")+1]
			info := strings.Fields(strings.TrimPrefix(trimmed, fence))
			cur = &block{file: file, line: n}
			if len(info) > 0 {
				cur.lang = info[0]
			}
			cur.marker, cur.markerErr = parseMarker(previous)
			body.Reset()
		case cur != nil && trimmed == fence:
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
		if trimmed != "" {
			previous = line
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the code block is never closed", file, cur.line)
	}
	return out, sc.Err()
}

func parseMarker(line string) (*runMarker, error) {
	m := markerLine.FindStringSubmatch(line)
	if m == nil {
		if strings.Contains(line, "<!-- run:") {
			return nil, fmt.Errorf("malformed run marker %q", line)
		}
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(m[1]))
	dec.DisallowUnknownFields()
	dec.UseNumber() // inputs and outputs keep every digit
	var r runMarker
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("run marker: %w", err)
	}
	if r.Status == "" {
		return nil, fmt.Errorf("run marker: status is required")
	}
	return &r, nil
}

// isDefinition reports whether a block is a definition document: YAML
// whose first line that is not blank or a comment starts with `key:`.
func (b block) isDefinition() bool {
	if b.lang != "yaml" && b.lang != "yml" {
		return false
	}
	for _, l := range strings.Split(b.body, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return strings.HasPrefix(l, "key:")
	}
	return false
}

func (b block) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }
