package pages_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

var asJSON = map[string]string{"Accept": "application/json"}

func decode[T any](t *testing.T, a servertest.Answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(a.Body), &v); err != nil {
		t.Fatalf("decode %d %q: %v", a.Status, a.Body, err)
	}
	return v
}

type checkAnswer struct {
	Document map[string]any       `json:"document"`
	YAML     string               `json:"yaml"`
	Manifest *definition.Manifest `json:"manifest"`
	Hash     string               `json:"hash"`
	Problems []definition.Problem `json:"problems"`
	Cycles   [][]string           `json:"cycles"`
	Version  int                  `json:"version"`
	Created  bool                 `json:"created"`
	Error    *httpx.ErrorDetail   `json:"error"`
	// Check is a refused save's check of the document.
	Check *checkAnswer `json:"check"`
}

func TestEditorCheckAnswers(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	path := "/t/" + f.a.Slug + "/definitions/orders/check"
	check := func(doc string) checkAnswer {
		t.Helper()
		a := f.request(f.victor, "POST", path, url.Values{"document": {doc}}, asJSON)
		if a.Status != http.StatusOK {
			t.Fatalf("check = %d %s", a.Status, a.Body)
		}
		return decode[checkAnswer](t, a)
	}

	ok := check(ordersDraft)
	if ok.Manifest == nil || len(ok.Hash) != 64 || len(ok.Problems) != 0 || ok.YAML != ordersDraft {
		t.Errorf("a valid YAML document: %+v", ok)
	}
	if steps, _ := ok.Document["steps"].([]any); len(steps) != 1 {
		t.Errorf("the document as JSON has steps %v", ok.Document["steps"])
	}

	js := check(`{"steps": [{"ref": "a", "type": "task", "with": {"handler": "builtin.noop"}}]}`)
	if js.Hash != ok.Hash || !strings.Contains(js.YAML, "handler: builtin.noop") || strings.Index(js.YAML, "steps") > strings.Index(js.YAML, "ref") {
		t.Errorf("a JSON document without its key: hash %s (want %s), YAML\n%s", js.Hash, ok.Hash, js.YAML)
	}

	bad := check("key: orders\nsteps:\n  - {ref: a, type: task, with: {}}\n")
	if bad.Manifest != nil || len(bad.Problems) != 1 || bad.Problems[0].Path != "steps[0].with.handler" || bad.Problems[0].Step != "a" {
		t.Errorf("a missing handler: %+v", bad.Problems)
	}

	cyc := check("key: orders\nsteps:\n  - {ref: a, type: transform, with: {expr: '1'}}\n  - {ref: b, type: transform, with: {expr: '1'}}\n" +
		"edges:\n  - {from: a, to: b}\n  - {from: b, to: a}\n")
	if fmt.Sprint(cyc.Cycles) != "[[a b]]" {
		t.Errorf("a cycle: cycles %v, problems %+v", cyc.Cycles, cyc.Problems)
	}

	other := check(strings.Replace(ordersDraft, "key: orders", "key: payments", 1))
	if other.Manifest != nil || len(other.Problems) == 0 || other.Problems[0].Path != "key" {
		t.Errorf("another key: %+v", other.Problems)
	}

	broken := check("key: orders\nsteps: [\n")
	if broken.Document != nil || len(broken.Problems) == 0 || broken.YAML != "key: orders\nsteps: [\n" {
		t.Errorf("broken YAML: %+v", broken)
	}
}

func TestEditorRoles(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/definitions"
	valid := url.Values{"document": {ordersDraft}}

	page := f.request(f.victor, "GET", base+"/orders/edit", nil, nil)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `id="read-only"`) || strings.Contains(page.Body, "palette-item") ||
		strings.Contains(page.Body, `id="publish"`) || !strings.Contains(page.Body, "readonly") {
		t.Errorf("a viewer's editor = %d, read-only %v, palette %v", page.Status,
			strings.Contains(page.Body, `id="read-only"`), strings.Contains(page.Body, "palette-item"))
	}
	list := f.request(f.victor, "GET", base, nil, nil)
	if list.Status != http.StatusOK || !strings.Contains(list.Body, `data-definition="orders"`) || strings.Contains(list.Body, "create-definition") {
		t.Errorf("a viewer's definitions list = %d", list.Status)
	}
	for _, r := range []struct{ path string }{{base}, {base + "/orders/draft"}, {base + "/orders/publish"}} {
		form := url.Values{"key": {"mine"}, "document": valid["document"]}
		if a := f.request(f.victor, "POST", r.path, form, asJSON); a.Status != http.StatusForbidden {
			t.Errorf("a viewer's POST %s = %d, want 403", r.path, a.Status)
		}
	}
	f.assertTenantAUntouched(t)

	editor := servertest.NewBrowserClient(t)
	f.csrf[editor] = f.signIn(t, editor, walt)
	if a := f.request(editor, "POST", base, url.Values{"key": {"new-one"}}, nil); a.Status != http.StatusSeeOther || a.Location != base+"/new-one/edit" {
		t.Errorf("an editor creating = %d → %s", a.Status, a.Location)
	}
	if a := f.request(editor, "POST", base, url.Values{"key": {"Bad Key"}}, nil); a.Status != http.StatusBadRequest || !strings.Contains(a.Body, "lowercase") {
		t.Errorf("a bad key = %d", a.Status)
	}

	// A draft is validated as the API does: one that does not compile, or
	// does not even parse, is refused with its problems and not stored.
	for _, bad := range []string{"key: new-one\nsteps: []\n", "key: new-one\nsteps: [ {ref: a\n"} {
		refusedDraft := f.request(editor, "POST", base+"/new-one/draft", url.Values{"document": {bad}}, asJSON)
		draft := decode[checkAnswer](t, refusedDraft)
		if refusedDraft.Status != http.StatusUnprocessableEntity || draft.Error == nil || len(draft.Check.Problems) == 0 {
			t.Errorf("an invalid draft %q = %d %s", bad, refusedDraft.Status, refusedDraft.Body)
		}
	}
	def, err := f.Store.DefinitionGet(context.Background(), f.a.ID, "new-one")
	if err != nil || (def.Draft != nil && strings.Contains(def.Draft.Source, "{ref: a")) {
		t.Errorf("an invalid draft was stored: %+v, %v", def.Draft, err)
	}
	saved := f.request(editor, "POST", base+"/new-one/draft", url.Values{"document": {strings.Replace(ordersDraft, "orders", "new-one", 1)}}, asJSON)
	if saved.Status != http.StatusOK || !strings.Contains(saved.Body, "saved_at") {
		t.Errorf("a valid draft = %d %s", saved.Status, saved.Body)
	}

	refused := f.request(editor, "POST", base+"/new-one/publish", url.Values{"document": {"key: new-one\nsteps: []\n"}}, asJSON)
	if refused.Status != http.StatusUnprocessableEntity || !strings.Contains(refused.Body, "at least one step") {
		t.Errorf("publishing an invalid document = %d %s", refused.Status, refused.Body)
	}
	doc := strings.Replace(ordersDraft, "orders", "new-one", 1)
	first := f.request(editor, "POST", base+"/new-one/publish", url.Values{"document": {doc}}, asJSON)
	v1 := decode[checkAnswer](t, first)
	if first.Status != http.StatusCreated || v1.Version != 1 || !v1.Created {
		t.Errorf("publish = %d %s", first.Status, first.Body)
	}
	again := f.request(editor, "POST", base+"/new-one/publish", url.Values{"document": {doc + "# same plan\n"}}, asJSON)
	if v := decode[checkAnswer](t, again); again.Status != http.StatusOK || v.Version != 1 || v.Created {
		t.Errorf("publishing the same plan again = %d %s", again.Status, again.Body)
	}
	audit, _ := f.Store.AuditList(context.Background(), f.a.ID, 10)
	if len(audit) != 1 || audit[0].Action != store.AuditDefinitionPublish || !strings.Contains(audit[0].Actor, walt) {
		t.Errorf("audit after publishing: %+v", audit)
	}
}

// Without script, the editor is a form: posting it answers the page with
// the outcome.
func TestEditorFormPosts(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/definitions/orders"
	posted := func(what, path, doc, notice string) {
		t.Helper()
		a := f.request(f.alice, "POST", base+path, url.Values{"document": {doc}}, nil)
		if a.Status != http.StatusSeeOther || !strings.HasPrefix(a.Location, base+"/edit?done=") {
			t.Fatalf("%s = %d to %q, want a redirect to the editor", what, a.Status, a.Location)
		}
		if page := f.request(f.alice, "GET", a.Location, nil, nil); !strings.Contains(page.Body, notice) {
			t.Fatalf("after %s the editor does not say %q", what, notice)
		}
		if page := f.request(f.alice, "GET", a.Location, nil, nil); strings.Contains(page.Body, notice) {
			t.Errorf("reloading after %s says %q again", what, notice)
		}
	}
	posted("form publish of v1's plan", "/publish", ordersDraft, "Published v1")
	changed := strings.Replace(ordersDraft, "builtin.noop", "builtin.echo", 1)
	posted("form publish", "/publish", changed, "Published v2")
	posted("form draft", "/draft", changed+"name: Orders\n", "Draft saved")
	a := f.request(f.alice, "POST", base+"/draft", url.Values{"document": {"key: orders\nsteps: [ {ref: a\n"}}, nil)
	if a.Status != http.StatusUnprocessableEntity || !strings.Contains(a.Body, "not saved") {
		t.Fatalf("form draft that does not parse = %d", a.Status)
	}
	a = f.request(f.alice, "POST", base+"/publish", url.Values{"document": {"key: orders\nsteps:\n  - {ref: a, type: task}\n"}}, nil)
	if a.Status != http.StatusUnprocessableEntity || !strings.Contains(a.Body, "steps[0].with") {
		t.Fatalf("form publish of a broken document = %d", a.Status)
	}
	diff := f.request(f.alice, "GET", base+"/diff?from=1&to=draft", nil, nil)
	if diff.Status != http.StatusOK || !strings.Contains(diff.Body, `class="diff-change"`) || !strings.Contains(diff.Body, "2 changed lines") {
		t.Fatalf("diff = %d\n%s", diff.Status, diff.Body)
	}
	if a := f.request(f.alice, "GET", base+"/diff?from=7&to=draft", nil, nil); a.Status != http.StatusNotFound {
		t.Errorf("diff with a missing version = %d", a.Status)
	}

	// Unpublish from the versions table: the version's row says so and
	// offers it no more; again is a no-op; viewers may not.
	if page := f.request(f.alice, "GET", base+"/edit", nil, nil); !strings.Contains(page.Body, `id="unpublish-2"`) {
		t.Fatal("the editor offers no unpublish for v2")
	}
	posted("unpublish", "/versions/2/unpublish", "", "Unpublished v2")
	posted("unpublish again", "/versions/2/unpublish", "", "v2 was already unpublished")
	if page := f.request(f.alice, "GET", base+"/edit", nil, nil); strings.Contains(page.Body, `id="unpublish-2"`) || !strings.Contains(page.Body, `id="unpublish-1"`) {
		t.Error("after unpublishing v2 the editor still offers it, or no longer offers v1")
	}
	if a := f.request(f.victor, "POST", base+"/versions/1/unpublish", url.Values{}, nil); a.Status != http.StatusForbidden {
		t.Errorf("a viewer's unpublish = %d", a.Status)
	}
	if a := f.request(f.alice, "POST", base+"/versions/9/unpublish", url.Values{}, nil); a.Status != http.StatusNotFound {
		t.Errorf("unpublish of a missing version = %d", a.Status)
	}
}

// The editor's catalogue matches the compiler: each type's sample
// compiles, and leaving out a field marked required is a problem on that
// field.
func TestStepKindsMatchTheCompiler(t *testing.T) {
	t.Parallel()
	if len(views.StepKinds) != len(definition.StepTypes) {
		t.Fatalf("%d kinds in the palette, %d step types", len(views.StepKinds), len(definition.StepTypes))
	}
	for _, k := range views.StepKinds {
		if !definition.StepType(k.Type).Valid() {
			t.Errorf("%s is not a step type", k.Type)
		}
		if k.Type != "gather" { // a gather needs a scatter before it
			if _, err := compileStep(k.Type, k.Sample); err != nil {
				t.Errorf("the %s sample does not compile: %v", k.Type, err)
			}
		}
		for _, f := range k.Fields {
			if !f.Required {
				continue
			}
			with := map[string]any{}
			for n, v := range k.Sample {
				if n != f.Name {
					with[n] = v
				}
			}
			_, err := compileStep(k.Type, with)
			if !strings.Contains(fmt.Sprint(err), "steps[0].with."+f.Name) {
				t.Errorf("%s without %s: %v", k.Type, f.Name, err)
			}
		}
	}
}

func compileStep(typ string, with map[string]any) (*definition.Compiled, error) {
	doc, _ := json.Marshal(map[string]any{"key": "k", "steps": []any{map[string]any{"ref": "s", "type": typ, "with": with}}})
	return definition.Compile(doc, definition.FormatJSON)
}

func TestEditorTestRun(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	path := "/t/" + f.a.Slug + "/definitions/orders/runs"
	a := f.request(f.alice, "POST", path, url.Values{"input": {`{"amount": 3}`}}, asJSON)
	started := decode[struct{ ID string }](t, a)
	if a.Status != http.StatusCreated || started.ID == "" {
		t.Fatalf("test run = %d %s", a.Status, a.Body)
	}
	page := f.request(f.victor, "GET", "/t/"+f.a.Slug+"/runs/"+started.ID, nil, nil)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, started.ID) || !strings.Contains(page.Body, `id="run-status"`) {
		t.Errorf("run page = %d", page.Status)
	}
	if a := f.request(f.alice, "POST", path, url.Values{"input": {`{"amount": `}}, asJSON); a.Status != http.StatusBadRequest {
		t.Errorf("malformed input = %d", a.Status)
	}
	if a := f.request(f.victor, "POST", path, url.Values{"input": {`{}`}}, asJSON); a.Status != http.StatusForbidden {
		t.Errorf("a viewer's test run = %d", a.Status)
	}
	if a := f.request(f.bert, "GET", "/t/"+f.b.Slug+"/runs/"+started.ID, nil, nil); a.Status != http.StatusNotFound {
		t.Errorf("another tenant's run = %d", a.Status)
	}
}

// The definitions list searches keys and names, ignoring case.
func TestDefinitionsListSearches(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/definitions"
	for q, want := range map[string][]string{"ORD": {"orders"}, "spa": {"spare"}, "": {"orders", "spare"}} {
		a := f.request(f.victor, "GET", base+"?q="+url.QueryEscape(q), nil, nil)
		if a.Status != http.StatusOK {
			t.Fatalf("search %q = %d", q, a.Status)
		}
		for _, key := range []string{"orders", "spare"} {
			has := strings.Contains(a.Body, `/definitions/`+key+`/edit"`)
			if has != slices.Contains(want, key) {
				t.Errorf("search %q lists %s: %v", q, key, has)
			}
		}
	}
	if a := f.request(f.victor, "GET", base+"?q=nothing", nil, nil); !strings.Contains(a.Body, `id="no-match"`) {
		t.Error("a search that matches nothing does not say so")
	}
}
