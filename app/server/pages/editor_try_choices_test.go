package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// tryChoicesDoc has a step over a list in each of the two ways (for_each,
// a scatter) and one that reads the time.
const tryChoicesDoc = `steps:
  - {ref: each, type: transform, for_each: 'input.items', with: {expr: 'item.id + ":" + string(index)'}}
  - {ref: fan, type: scatter, with: {items_expr: 'input.items', key_expr: 'item.id', do: {type: transform, with: {expr: 'item.id + "!"'}}}}
  - {ref: stamp, type: transform, with: {expr: 'string(now)'}}
`

// A try evaluates the expressions on the item chosen (by its index; the
// first by default) and at the time chosen (the server's clock by
// default); an index past the list's end stops the try on a result
// saying so, and a malformed choice is a 400.
func TestEditorTryChoosesTheItemAndNow(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	path := "/t/" + f.a.Slug + "/definitions/orders/try"
	const sample = `{"input": {"items": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}}`
	try := func(step, item, now string) (int, string) {
		t.Helper()
		a := f.request(f.alice, "POST", path, url.Values{"document": {tryChoicesDoc}, "step": {step}, "sample": {sample}, "item": {item}, "now": {now}}, asJSON)
		return a.Status, a.Body
	}
	type answer struct {
		tryAnswer
		Now  string `json:"now"`
		Item *int   `json:"item"`
	}
	ok := func(step, item, now string) answer {
		t.Helper()
		status, body := try(step, item, now)
		if status != http.StatusOK {
			t.Fatalf("try %s item %q now %q = %d %s", step, item, now, status, body)
		}
		return decodeBody[answer](t, body)
	}
	value := func(a answer, path string) any {
		for _, r := range a.Results {
			if r.Path == path {
				return r.Value
			}
		}
		return nil
	}

	if a := ok("each", "", ""); value(a, "with.expr") != "a:0" || a.Item == nil || *a.Item != 0 {
		t.Errorf("for_each by default: %+v", a)
	}
	if a := ok("each", "2", ""); value(a, "with.expr") != "c:2" || a.Item == nil || *a.Item != 2 {
		t.Errorf("for_each, item 2: %+v", a)
	}
	if a := ok("fan", "1", ""); value(a, "with.do.with.expr") != "b!" {
		t.Errorf("the scatter's template, item 1: %+v", a)
	}
	a := ok("each", "3", "")
	if last := a.Results[len(a.Results)-1]; last.Path != "item" || last.OK || !strings.Contains(last.Error, "from 0 to 2") || value(a, "with.expr") != nil {
		t.Errorf("an item past the end: %+v", a.Results)
	}

	if a := ok("stamp", "", "2030-05-06T07:08:09+02:00"); value(a, "with.expr") != "2030-05-06T05:08:09Z" || a.Now != "2030-05-06T05:08:09Z" {
		t.Errorf("now chosen: %v, answered now %s", value(a, "with.expr"), a.Now)
	}
	if a := ok("stamp", "", ""); a.Now == "" || value(a, "with.expr") == nil {
		t.Errorf("now by default: %+v", a)
	}

	for _, c := range []struct{ item, now, want string }{
		{"-1", "", "item must be"}, {"first", "", "item must be"}, {"", "tomorrow", "RFC 3339"}, {"", "2030-05-06", "RFC 3339"},
	} {
		if status, body := try("each", c.item, c.now); status != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("item %q now %q = %d %s", c.item, c.now, status, body)
		}
	}
}
