package pages_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

type testsAnswer struct {
	HTML    string `json:"html"`
	Ran     bool   `json:"ran"`
	Cases   int    `json:"cases"`
	Failed  int    `json:"failed"`
	Updated string `json:"updated"`
}

// The editor's "Run tests" runs the posted cases against the posted
// document, unpublished, with the runner behind `ductor test`.
func TestEditorRunsTestsOfTheDocumentAsItStands(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	path := "/t/" + f.a.Slug + "/definitions/orders/test"
	doc := "steps:\n  - {ref: charge, type: task, with: {handler: pay.charge}}\n  - {ref: total, type: transform, with: {expr: 'steps.charge.output.cents * 2'}}\n" +
		"edges:\n  - {from: charge, to: total}\noutput_expr: '{\"total\": steps.total.output}'\n"
	run := func(who, document, tests string) testsAnswer {
		t.Helper()
		a := f.request(f.alice, "POST", path, url.Values{"document": {document}, "tests": {tests}}, asJSON)
		if who == "victor" {
			a = f.request(f.victor, "POST", path, url.Values{"document": {document}, "tests": {tests}}, asJSON)
		}
		if a.Status != http.StatusOK {
			t.Fatalf("tests = %d %s", a.Status, a.Body)
		}
		return decode[testsAnswer](t, a)
	}

	// A definition path in the text is not read: the document is the
	// definition.
	pass := run("alice", doc, "definition: /etc/passwd\ntests:\n  - name: doubles\n    mocks: {charge: {output: {cents: 21}}}\n"+
		"    expect: {status: succeeded, output: {total: 42}, attempts: {charge: 1}}\n")
	if !pass.Ran || pass.Cases != 1 || pass.Failed != 0 || !strings.Contains(pass.HTML, "1 test passed") || strings.Contains(pass.HTML, "passwd") {
		t.Errorf("a passing case: %+v", pass)
	}

	// A failing case says why, and offers what was observed as its
	// expectation, the text's comments kept.
	fail := run("alice", doc, "# mine\ntests:\n  - name: wrong\n    mocks: {charge: {output: {cents: 1}}}\n    expect: {output: {total: 3}}\n")
	if fail.Failed != 1 || !strings.Contains(fail.HTML, "1 of 1 test failed") || !strings.Contains(fail.HTML, "wrong") ||
		!strings.Contains(fail.Updated, "# mine") || !strings.Contains(fail.Updated, "total: 2") {
		t.Errorf("a failing case: %+v", fail)
	}

	// The list alone is accepted; a missing mock is the case's failure.
	bare := run("alice", doc, "- name: unmocked\n")
	if bare.Cases != 1 || bare.Failed != 1 || !strings.Contains(bare.HTML, "charge") {
		t.Errorf("an unmocked step: %+v", bare)
	}

	// A document with problems, and text that is not cases, say so.
	if a := run("alice", "steps:\n  - {ref: a, type: task, with: {}}\n", "tests: []"); a.Ran || !strings.Contains(a.HTML, "the document has problems") {
		t.Errorf("a broken document: %+v", a)
	}
	if a := run("alice", doc, "tests: [\n"); a.Ran || !strings.Contains(a.HTML, "the tests: parse") {
		t.Errorf("broken tests: %+v", a)
	}

	// Viewers may not; another tenant's members do not see the route.
	if a := f.request(f.victor, "POST", path, url.Values{"document": {doc}, "tests": {"tests: []"}}, asJSON); a.Status != http.StatusForbidden {
		t.Errorf("a viewer's tests = %d", a.Status)
	}
	if a := f.request(f.bert, "POST", path, url.Values{"document": {doc}, "tests": {"tests: []"}}, asJSON); a.Status != http.StatusNotFound {
		t.Errorf("another tenant's member = %d", a.Status)
	}

	// Without script the form post answers the editor with the results
	// and both texts as posted.
	page := f.request(f.alice, "POST", path, url.Values{"document": {doc}, "tests": {"tests:\n  - name: plain\n    mocks: {charge: {output: {cents: 1}}}\n    expect: {status: succeeded}\n"}}, nil)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `id="test-results"`) || !strings.Contains(page.Body, "1 test passed") ||
		!strings.Contains(page.Body, "name: plain") || !strings.Contains(page.Body, "pay.charge") {
		t.Errorf("the form post = %d\n%s", page.Status, page.Body)
	}
}
