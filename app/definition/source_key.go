package definition

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// String names the format as stored with a source: "json", "yaml" or
// "auto".
func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "json"
	case FormatYAML:
		return "yaml"
	}
	return "auto"
}

// Detect resolves FormatAuto for doc; other formats are returned as they
// are.
func Detect(doc []byte, f Format) Format {
	if f == FormatAuto {
		return sniff(doc)
	}
	return f
}

// DocumentKey reads the top-level key of a document without compiling
// it. present is false when the document has no key member; a key that is
// not a string is present with key "". A document that does not parse, or
// is not an object, fails with an *InvalidError.
func DocumentKey(doc []byte, f Format) (key string, present bool, err error) {
	tree, err := parse(doc, f)
	if err != nil {
		return "", false, err
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return "", false, syntaxError("a definition is an object")
	}
	v, present := obj["key"]
	key, _ = v.(string)
	return key, present, nil
}

// WithKey returns doc with a top-level key member set to key, inserted
// as the first member so the rest of the source stays as authored. doc
// must have no key already (see DocumentKey); the result is meant to be
// compiled, which reports anything the insertion could not fix.
func WithKey(doc []byte, f Format, key string) []byte {
	quoted, _ := json.Marshal(key)
	doc = bytes.TrimPrefix(doc, []byte("\ufeff"))
	if Detect(doc, f) == FormatJSON || startsFlow(doc) {
		return insertFlowKey(doc, quoted)
	}
	return insertBlockKey(doc, quoted)
}

// insertFlowKey adds "key": K after the first '{'.
func insertFlowKey(doc, quoted []byte) []byte {
	open := bytes.IndexByte(doc, '{')
	if open < 0 {
		return doc
	}
	member := fmt.Appendf(nil, `"key": %s`, quoted)
	if rest := bytes.TrimLeft(doc[open+1:], " \t\r\n"); len(rest) == 0 || rest[0] != '}' {
		member = append(member, ", "...)
	}
	out := append(bytes.Clone(doc[:open+1]), member...)
	return append(out, doc[open+1:]...)
}

// insertBlockKey adds a `key: K` line before the first line of content,
// indented like it, after any comments, directives and "---".
func insertBlockKey(doc, quoted []byte) []byte {
	at := 0
	for at < len(doc) {
		end := bytes.IndexByte(doc[at:], '\n')
		if end < 0 {
			end = len(doc) - at
		}
		line := bytes.TrimRight(doc[at:at+end], "\r")
		if !preamble(line) {
			indent := line[:len(line)-len(bytes.TrimLeft(line, " "))]
			out := append(bytes.Clone(doc[:at]), indent...)
			out = fmt.Appendf(out, "key: %s\n", quoted)
			return append(out, doc[at:]...)
		}
		at += end + 1
	}
	return fmt.Appendf(bytes.Clone(doc), "\nkey: %s\n", quoted)
}

// preamble reports a YAML line that comes before a document's content.
func preamble(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) == 0 || t[0] == '#' || t[0] == '%' || bytes.Equal(t, []byte("---"))
}

// startsFlow reports a YAML document written as a flow mapping ("{…}").
func startsFlow(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !preamble(line) {
			return bytes.HasPrefix(bytes.TrimSpace(line), []byte("{"))
		}
	}
	return false
}
