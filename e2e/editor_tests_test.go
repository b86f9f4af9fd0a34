package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// editorTestsDoc waits 72 hours for an approval, then refunds; on the
// timeout it records that it expired. A test of it takes one tick for
// the timeout, not three days.
const editorTestsDoc = `key: refunds
steps:
  - {ref: approve, type: approval, on_error: continue, with: {approvers: ["role:owner"], timeout: 72h}}
  - {ref: charge, type: task, with: {handler: pay.refund}}
  - {ref: expired, type: transform, with: {expr: '"expired"'}}
edges:
  - {from: approve, to: charge, on: approved}
  - {from: approve, to: expired, on: error}
`

// TestEditorTestsTheDocumentBeforePublishing runs cases in the editor's
// test pane against the document as it stands, before any version
// exists (the real test run waits for one), and takes what a failing
// case observed as its expectation.
func TestEditorTestsTheDocumentBeforePublishing(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "refunds")
	if !boolJS(t, ctx, `document.getElementById("run-start").disabled && !!document.getElementById("run-needs-version")`) {
		t.Fatal("a real run is offered before any version exists")
	}
	run(t, ctx, "write the document", chromedp.Evaluate[chromedp.Void](`(() => {
		const y = document.getElementById("yaml");
		y.value = `+"`"+editorTestsDoc+"`"+`;
		y.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)

	cases := `tests:
  - name: approved
    mocks: {charge: {output: {refunded: true}}}
    deliver:
      - {at: 1h, approval: {node: approve, approved: true, by: "user:ana"}}
    expect: {status: succeeded, nodes: {charge: succeeded, expired: skipped}}
  - name: nobody decides
    expect: {status: failed}
`
	run(t, ctx, "write the cases", chromedp.SetValue(chromedp.CSS("#tests"), cases),
		chromedp.Click(chromedp.CSS("#run-tests")),
		chromedp.WaitVisible(chromedp.CSS("#tests-summary")))
	if got := text(t, ctx, "#tests-summary"); got != "1 of 2 tests failed" {
		t.Fatalf("the summary says %q\n%s", got, text(t, ctx, "#test-results"))
	}
	if got := text(t, ctx, `.test-case.failed[data-name="nobody decides"]`); !strings.Contains(got, "status") || !strings.Contains(got, "72h") {
		t.Errorf("the failing case says %q", got)
	}
	shoot(t, ctx, "editor-tests")

	run(t, ctx, "take the observed outcome", chromedp.Click(chromedp.CSS(".test-updated summary")),
		chromedp.Click(chromedp.CSS("#tests-accept"), chromedp.NodeVisible))
	if got := value(t, ctx, "#tests"); !strings.Contains(got, "status: succeeded") || !strings.Contains(got, "duration: 72h0m0s") {
		t.Fatalf("the cases after taking the outcome:\n%s", got)
	}
	run(t, ctx, "run them again", chromedp.Click(chromedp.CSS("#run-tests")),
		chromedp.WaitVisible(chromedp.CSS("#tests-summary.ok")))
	if got := text(t, ctx, "#tests-summary"); got != "2 tests passed" {
		t.Fatalf("after taking the outcome: %q", got)
	}

	// The cases are kept in this browser across a reload (once the
	// document is saved, so the page does not hold the reload up).
	run(t, ctx, "save the draft", chromedp.Click(chromedp.CSS("#save-draft")))
	waitFor(t, ctx, "the draft to be saved", `document.getElementById("notice").textContent.startsWith("Draft saved")`)
	run(t, ctx, "reload", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
	if got := value(t, ctx, "#tests"); !strings.Contains(got, "duration: 72h0m0s") {
		t.Fatalf("after a reload the cases are:\n%s", got)
	}
}

func boolJS(t *testing.T, ctx context.Context, js string) bool {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// value is a form field's value.
func value(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).value`, css)))
	if err != nil {
		t.Fatalf("read %s: %v", css, err)
	}
	return v
}

// attrOf is an element's attribute ("" when it has none).
func attrOf(t *testing.T, ctx context.Context, css, name string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {getAttribute: () => ""}).getAttribute(%q) || ""`, css, name)))
	if err != nil {
		t.Fatalf("read %s %s: %v", css, name, err)
	}
	return v
}
