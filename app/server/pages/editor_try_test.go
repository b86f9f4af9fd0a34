package pages_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

type tryAnswer struct {
	Step    string `json:"step"`
	Outcome string `json:"outcome"`
	Results []struct {
		Path  string `json:"path"`
		Expr  string `json:"expr"`
		OK    bool   `json:"ok"`
		Value any    `json:"value"`
		Error string `json:"error"`
		Code  string `json:"code"`
		To    string `json:"to"`
		Taken bool   `json:"taken"`
	} `json:"results"`
}

type tryError struct {
	Error struct {
		Code    string    `json:"code"`
		Message string    `json:"message"`
		Details tryAnswer `json:"details"`
	} `json:"error"`
}

// tryDoc prices an order from a task's output, then routes it by the
// total: a draft, never published.
const tryDoc = `steps:
  - {ref: qty, type: task, with: {handler: builtin.echo}}
  - {ref: total, type: transform, with: {expr: 'input.price * steps.qty.output.n'}}
  - {ref: big, type: task, with: {handler: builtin.noop}}
  - {ref: small, type: task, with: {handler: builtin.noop}}
  - {ref: broken, type: transform, with: {expr: 'input.missing.deeper'}}
  - {ref: hostile, type: transform, with: {expr: 'lists.range(int(input.n)).map(i, lists.range(int(input.n)).map(j, i + j))'}}
  - {ref: fan, type: scatter, with: {items_expr: 'input.items', key_expr: 'item.id', do: {type: transform, with: {expr: 'item.id + "!"'}}}}
edges:
  - {from: qty, to: total}
  - from: total
    choice:
      - {when: 'steps.total.output > 100', to: big}
      - {default: true, to: small}
`

// The editor's "Try it" evaluates one step's expressions against a
// sample, from the posted document, unpublished; a choice says which
// branch it takes; a hostile expression is stopped by the cost limit
// with a 422; samples come only from the tenant's own runs of the
// definition.
func TestEditorTriesAStepAgainstASample(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	path := "/t/" + f.a.Slug + "/definitions/orders/try"
	try := func(step, sample string) (int, string) {
		t.Helper()
		a := f.request(f.alice, "POST", path, url.Values{"document": {tryDoc}, "step": {step}, "sample": {sample}}, asJSON)
		return a.Status, a.Body
	}
	ok := func(step, sample string) tryAnswer {
		t.Helper()
		a := f.request(f.alice, "POST", path, url.Values{"document": {tryDoc}, "step": {step}, "sample": {sample}}, asJSON)
		if a.Status != http.StatusOK {
			t.Fatalf("try %s = %d %s", step, a.Status, a.Body)
		}
		return decode[tryAnswer](t, a)
	}

	// The transform's value, and the choice after it.
	got := ok("total", `{"input": {"price": 30}, "steps": {"qty": {"output": {"n": 4}}}}`)
	if len(got.Results) != 3 || got.Results[0].Path != "with.expr" || !got.Results[0].OK || got.Results[0].Value != float64(120) {
		t.Fatalf("the transform: %+v", got)
	}
	// The choice sees the transform's value as its output, as it would
	// once the step ran.
	if got.Outcome != "→ big" || !got.Results[1].Taken || got.Results[1].To != "big" || got.Results[2].Taken {
		t.Errorf("the choice with a total of 120: %+v", got)
	}
	// A sample holding the step's output is taken as it is.
	got = ok("total", `{"input": {"price": 100}, "steps": {"qty": {"output": {"n": 4}}, "total": {"output": 4}}}`)
	if got.Outcome != "→ small" || got.Results[1].Taken || !got.Results[2].Taken {
		t.Errorf("the choice with a total of 4: %+v", got)
	}

	// A scatter's list, its children's keys and its template.
	got = ok("fan", `{"input": {"items": [{"id": "a"}, {"id": "b"}]}}`)
	want := map[string]string{"with.items_expr": "[map[id:a] map[id:b]]", "with.key_expr": "[a b]", "with.do.with.expr": "a!"}
	for _, r := range got.Results {
		if w, ok := want[r.Path]; !ok || !r.OK || fmt.Sprint(r.Value) != w {
			t.Errorf("scatter %s = %v (%s), want %q", r.Path, r.Value, r.Error, w)
		}
	}

	// A failing expression says where and why, in a 200.
	got = ok("broken", `{"input": {}}`)
	if r := got.Results[0]; r.Path != "with.expr" || r.OK || r.Code != "expression_error" || !strings.Contains(r.Error, "missing") {
		t.Errorf("a failing expression: %+v", got.Results)
	}

	// A hostile one is stopped by the cost limit: a 422 naming it.
	status, body := try("hostile", `{"input": {"n": 10000}}`)
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "cost limit") || !strings.Contains(body, "with.expr") {
		t.Fatalf("a hostile expression = %d %s", status, body)
	}
	if e := decodeBody[tryError](t, body); e.Error.Details.Results[0].Code != "expression_limit" {
		t.Errorf("the hostile expression's details: %+v", e)
	}

	// Bad requests say what is wrong.
	for sample, want := range map[string]string{`[1]`: "JSON object", `{"inptu": {}}`: "inptu", `{`: "JSON"} {
		if status, body := try("total", sample); status != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("sample %s = %d %s", sample, status, body)
		}
	}
	if status, body := try("nope", `{}`); status != http.StatusUnprocessableEntity || !strings.Contains(body, "nope") {
		t.Errorf("an unknown step = %d %s", status, body)
	}
	a := f.request(f.alice, "POST", path, url.Values{"document": {"steps: [{ref: a, type: task}]"}, "step": {"a"}}, asJSON)
	if a.Status != http.StatusUnprocessableEntity || !strings.Contains(a.Body, "problems") {
		t.Errorf("a document with problems = %d %s", a.Status, a.Body)
	}

	// Viewers may not try; another tenant's members do not see the route.
	if a := f.request(f.victor, "POST", path, url.Values{"document": {tryDoc}, "step": {"total"}}, asJSON); a.Status != http.StatusForbidden {
		t.Errorf("a viewer's try = %d", a.Status)
	}
	if a := f.request(f.bert, "POST", path, url.Values{"document": {tryDoc}, "step": {"total"}}, asJSON); a.Status != http.StatusNotFound {
		t.Errorf("another tenant's member = %d", a.Status)
	}
}

// A sample comes from the tenant's own runs of the definition: the list
// holds them, and a run of another tenant or another definition is not
// found.
func TestEditorTrySamplesComeFromTheTenantsOwnRuns(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	runB := ordersRun(t, f.webBundle, f.b)
	base := "/t/" + f.a.Slug + "/definitions/orders/try/runs"

	list := decode[struct {
		Runs []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"runs"`
	}](t, f.request(f.alice, "GET", base, nil, asJSON))
	if len(list.Runs) != 1 || list.Runs[0].ID != f.runA.ID.String() {
		t.Fatalf("A's runs of orders: %+v", list)
	}

	a := f.request(f.alice, "GET", base+"/"+f.runA.ID.String(), nil, asJSON)
	got := decode[struct {
		Sample struct {
			Input map[string]any `json:"input"`
			Run   map[string]any `json:"run"`
			Steps map[string]any `json:"steps"`
		} `json:"sample"`
	}](t, a)
	if a.Status != http.StatusOK || got.Sample.Input == nil || got.Sample.Run["key"] != "orders" || got.Sample.Steps == nil {
		t.Errorf("A's run as a sample = %d %s", a.Status, a.Body)
	}

	// B's run, asked for in A: not found, and nothing of it shown.
	if a := f.request(f.alice, "GET", base+"/"+runB.ID.String(), nil, asJSON); a.Status != http.StatusNotFound || strings.Contains(a.Body, f.b.ID.String()) {
		t.Errorf("B's run through A = %d %s", a.Status, a.Body)
	}
	// B's owner in A: not found.
	if a := f.request(f.bert, "GET", base+"/"+f.runA.ID.String(), nil, asJSON); a.Status != http.StatusNotFound {
		t.Errorf("B's owner reads A's run = %d", a.Status)
	}
	// A's run under another definition's key: not found.
	if a := f.request(f.alice, "GET", "/t/"+f.a.Slug+"/definitions/spare/try/runs/"+f.runA.ID.String(), nil, asJSON); a.Status != http.StatusNotFound {
		t.Errorf("a run of orders as spare's = %d %s", a.Status, a.Body)
	}
}

func decodeBody[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	return v
}
