package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"
)

func TestEditorRefusesNUL(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/definitions/nul"
	doc := strings.Replace(servertest.NULJSON, `"key": "nul"`, `"key": "nul"`, 1)
	check := decode[checkAnswer](t, f.request(f.alice, "POST", base+"/check", url.Values{"document": {doc}}, asJSON))
	if check.Manifest != nil {
		t.Fatalf("a check of a document with NULs compiled")
	}
	details := make([]any, 0, len(check.Problems))
	for _, p := range check.Problems {
		details = append(details, map[string]any{"path": p.Path, "message": p.Message})
	}
	servertest.WantNULProblems(t, "check", http.StatusUnprocessableEntity, details, servertest.NULPaths)
	for _, route := range []string{"/draft", "/publish"} {
		for _, d := range []string{doc, servertest.NULYAML, "key: nul\nname: \x00\nsteps: []\n"} {
			a := f.request(f.alice, "POST", base+route, url.Values{"document": {d}}, asJSON)
			got := decode[checkAnswer](t, a)
			if a.Status != http.StatusUnprocessableEntity || got.Check == nil || len(got.Check.Problems) == 0 {
				t.Errorf("POST %s with a NUL %q = %d %s", route, d, a.Status, a.Body)
			}
		}
	}
}

// The editor's check refuses an alias bomb the same way.
func TestEditorRefusesYAMLAliasBomb(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	check := decode[checkAnswer](t, f.request(f.alice, "POST", "/t/"+f.a.Slug+"/definitions/bomb/check", url.Values{"document": {servertest.AliasBomb()}}, asJSON))
	if check.Manifest != nil || check.Document != nil || len(check.Problems) == 0 || !strings.Contains(check.Problems[0].Message, "aliases expand") {
		t.Errorf("check an alias bomb: %+v", check.Problems)
	}
}
