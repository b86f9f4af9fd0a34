package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"
)

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
			{"application/json", servertest.NULJSON, servertest.NULPaths},
			{"application/yaml", servertest.NULYAML, []string{"name", "steps[0].with.expr"}},
			{"application/yaml", "key: nul\n# a NUL \x00 in a comment\nsteps: []\n", nil},
		} {
			code, res := b.send(t, c.method, c.path, b.keyA, d.ct, d.doc)
			e, _ := res["error"].(map[string]any)
			details, _ := e["details"].([]any)
			servertest.WantNULProblems(t, c.method+" "+c.path+" "+d.ct, code, details, d.paths)
			if e["code"] != "invalid_definition" || len(details) == 0 {
				t.Errorf("%s %s: %v", c.method, c.path, res)
			}
		}
	}
}

func TestYAMLAliasBombRefused(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	code, res := b.send(t, "POST", "/api/v1/compile", b.keyA, "application/yaml", servertest.AliasBomb())
	if e, _ := res["error"].(map[string]any); code != http.StatusUnprocessableEntity || !strings.Contains(e["message"].(string), "aliases expand") {
		t.Errorf("compile an alias bomb = %d %v", code, res)
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
