package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// nulJSON holds a NUL in fields of every kind: the name, the
// description, a label, a step ref, an expression, a with-value, a
// trigger's event and a key.
const nulJSON = `{"key": "nul", "name": "n\u0000", "description": "d\u0000", "labels": {"team": "x\u0000"},
  "triggers": [{"event": "e\u0000"}],
  "steps": [{"ref": "a\u0000", "type": "transform", "with": {"expr": "'\u0000'"}},
            {"ref": "b", "type": "task", "with": {"handler": "builtin.noop", "q\u0000": 1}}]}`

var nulPaths = []string{"name", "description", "labels.team", "triggers[0].event", "steps[0].ref", "steps[0].with.expr", "steps[1].with"}

const nulYAML = "key: nul\nname: \"n\\0\"\nsteps:\n  - {ref: a, type: transform, with: {expr: \"'\\0'\"}}\n"

func wantNULProblems(t *testing.T, what string, code int, details []any, paths []string) {
	t.Helper()
	if code != http.StatusUnprocessableEntity {
		t.Errorf("%s = %d, want 422", what, code)
		return
	}
	got := map[string]bool{}
	for _, d := range details {
		m, _ := d.(map[string]any)
		if p, _ := m["path"].(string); strings.Contains(m["message"].(string), "NUL") {
			got[p] = true
		}
	}
	for _, p := range paths {
		if !got[p] {
			t.Errorf("%s: no NUL problem at %s in %v", what, p, details)
		}
	}
}

func TestDefinitionsAPIRefuseNUL(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/compile"},
		{"PUT", "/api/v1/definitions/nul"},
		{"POST", "/api/v1/definitions/nul/versions"},
	} {
		for _, d := range []struct {
			ct, doc string
			paths   []string
		}{
			{"application/json", nulJSON, nulPaths},
			{"application/yaml", nulYAML, []string{"name", "steps[0].with.expr"}},
			{"application/yaml", "key: nul\n# a NUL \x00 in a comment\nsteps: []\n", nil},
		} {
			code, res := b.send(t, c.method, c.path, b.keyA, d.ct, d.doc)
			e, _ := res["error"].(map[string]any)
			details, _ := e["details"].([]any)
			wantNULProblems(t, c.method+" "+c.path+" "+d.ct, code, details, d.paths)
			if e["code"] != "invalid_definition" || len(details) == 0 {
				t.Errorf("%s %s: %v", c.method, c.path, res)
			}
		}
	}
}

func TestEditorRefusesNUL(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/definitions/nul"
	doc := strings.Replace(nulJSON, `"key": "nul"`, `"key": "nul"`, 1)
	check := decode[checkAnswer](t, f.request(f.alice, "POST", base+"/check", url.Values{"document": {doc}}, asJSON))
	if check.Manifest != nil {
		t.Fatalf("a check of a document with NULs compiled")
	}
	details := make([]any, 0, len(check.Problems))
	for _, p := range check.Problems {
		details = append(details, map[string]any{"path": p.Path, "message": p.Message})
	}
	wantNULProblems(t, "check", http.StatusUnprocessableEntity, details, nulPaths)
	for _, route := range []string{"/draft", "/publish"} {
		for _, d := range []string{doc, nulYAML, "key: nul\nname: \x00\nsteps: []\n"} {
			a := f.request(f.alice, "POST", base+route, url.Values{"document": {d}}, asJSON)
			got := decode[checkAnswer](t, a)
			if a.status != http.StatusUnprocessableEntity || got.Check == nil || len(got.Check.Problems) == 0 {
				t.Errorf("POST %s with a NUL %q = %d %s", route, d, a.status, a.body)
			}
		}
	}
}

// aliasBomb is under 500 bytes and stands for a hundred thousand values.
func aliasBomb() string {
	bomb := "key: bomb\na: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = n
	}
	return bomb + "steps:\n  - {ref: s, type: task, with: {handler: builtin.noop, x: *e}}\n"
}

func TestYAMLAliasBombRefused(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	code, res := b.send(t, "POST", "/api/v1/compile", b.keyA, "application/yaml", aliasBomb())
	if e, _ := res["error"].(map[string]any); code != http.StatusUnprocessableEntity || !strings.Contains(e["message"].(string), "aliases expand") {
		t.Errorf("compile an alias bomb = %d %v", code, res)
	}
	f := setupTwoTenants(t)
	check := decode[checkAnswer](t, f.request(f.alice, "POST", "/t/"+f.a.Slug+"/definitions/bomb/check", url.Values{"document": {aliasBomb()}}, asJSON))
	if check.Manifest != nil || check.Document != nil || len(check.Problems) == 0 || !strings.Contains(check.Problems[0].Message, "aliases expand") {
		t.Errorf("check an alias bomb: %+v", check.Problems)
	}
}

// The other bodies that reach the database as JSON refuse a NUL too.
func TestTriggerBodiesRefuseNUL(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, "key: nul\nsteps:\n  - {ref: a, type: transform, with: {expr: '1'}}\n")
	for _, c := range []struct{ path, body string }{
		{"/api/v1/runs", `{"definition": "nul", "subject": "s\u0000"}`},
		{"/api/v1/runs", `{"definition": "nul", "context": {"k\u0000": 1}}`},
		{"/api/v1/runs", `{"definition": "nul", "search_attributes": {"region": "e\u0000"}}`},
		{"/api/v1/schedules", `{"id": "s1", "definition": "nul", "spec": {"interval": "1h"}, "input": {"x": "\u0000"}}`},
		{"/api/v1/runs/batch", `{"action": "cancel", "filter": {"subject": "\u0000"}}`},
	} {
		if code, _, raw := b.callRaw(t, "POST", c.path, c.body); code != http.StatusUnprocessableEntity || !strings.Contains(raw, "NUL") {
			t.Errorf("POST %s %s = %d %s, want 422", c.path, c.body, code, raw)
		}
	}
}
