package definition

import (
	"testing"
)

func TestWithKeyFillsAnAbsentKey(t *testing.T) {
	t.Parallel()
	const steps = `"steps": [{"ref": "a", "type": "transform", "with": {"expr": "1"}}]`
	cases := map[string]struct {
		doc string
		f   Format
	}{
		"json":              {`{` + steps + `}`, FormatJSON},
		"json spaced":       {"\n  {\n  " + steps + "\n}\n", FormatAuto},
		"yaml block":        {"steps:\n  - ref: a\n    type: transform\n    with: {expr: \"1\"}\n", FormatYAML},
		"yaml preamble":     {"# a comment\n%YAML 1.2\n---\n\nsteps:\n  - ref: a\n    type: transform\n    with: {expr: \"1\"}\n", FormatYAML},
		"yaml indented":     {"  steps:\n    - ref: a\n      type: transform\n      with: {expr: \"1\"}\n", FormatYAML},
		"yaml flow":         {"# flow\n{steps: [{ref: a, type: transform, with: {expr: \"1\"}}]}\n", FormatYAML},
		"yaml with bom":     {"\ufeffsteps:\n  - {ref: a, type: transform, with: {expr: \"1\"}}\n", FormatYAML},
		"yaml crlf":         {"# c\r\nsteps:\r\n  - {ref: a, type: transform, with: {expr: \"1\"}}\r\n", FormatYAML},
		"yaml name at last": {"steps:\n  - {ref: a, type: transform, with: {expr: \"1\"}}\nname: Last\n", FormatYAML},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, present, err := DocumentKey([]byte(tc.doc), tc.f); err != nil || present {
				t.Fatalf("before: present %v, %v", present, err)
			}
			doc := WithKey([]byte(tc.doc), tc.f, "filled-in")
			c, err := Compile(doc, tc.f)
			if err != nil {
				t.Fatalf("Compile(%q): %v", doc, err)
			}
			if c.Manifest.Key != "filled-in" {
				t.Fatalf("key = %q", c.Manifest.Key)
			}
		})
	}
}

func TestWithKeyOnAnEmptyObject(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"{}", "{ }", "{\n}"} {
		key, present, err := DocumentKey(WithKey([]byte(doc), FormatJSON, "k"), FormatJSON)
		if err != nil || !present || key != "k" {
			t.Errorf("%q: key %q present %v err %v", doc, key, present, err)
		}
	}
}

func TestDocumentKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		doc     string
		key     string
		present bool
		bad     bool
	}{
		{`{"key": "a"}`, "a", true, false},
		{"key: b\n", "b", true, false},
		{`{"key": 7}`, "", true, false},
		{`{"name": "x"}`, "", false, false},
		{`[1]`, "", false, true},
		{`{"key": `, "", false, true},
		{"- a\n- b\n", "", false, true},
	}
	for _, tc := range cases {
		key, present, err := DocumentKey([]byte(tc.doc), FormatAuto)
		if key != tc.key || present != tc.present || (err != nil) != tc.bad {
			t.Errorf("%q: %q %v %v, want %q %v bad=%v", tc.doc, key, present, err, tc.key, tc.present, tc.bad)
		}
	}
}

func TestFormatStringAndDetect(t *testing.T) {
	t.Parallel()
	if FormatJSON.String() != "json" || FormatYAML.String() != "yaml" || FormatAuto.String() != "auto" {
		t.Error("format names")
	}
	if Detect([]byte(" {}"), FormatAuto) != FormatJSON || Detect([]byte("a: 1"), FormatAuto) != FormatYAML ||
		Detect([]byte("{}"), FormatYAML) != FormatYAML {
		t.Error("Detect")
	}
}
