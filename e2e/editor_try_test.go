package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// editorTryDoc prices an order from a task's output and routes it by the
// total.
const editorTryDoc = `key: pricing
steps:
  - {ref: qty, type: task, with: {handler: builtin.echo, input_expr: '{"n": input.n}'}}
  - {ref: total, type: transform, with: {expr: 'input.price * steps.qty.output.n'}}
  - {ref: big, type: transform, with: {expr: '"big"'}}
  - {ref: small, type: transform, with: {expr: '"small"'}}
edges:
  - {from: qty, to: total}
  - from: total
    choice:
      - {when: 'steps.total.output > 100', to: big}
      - {default: true, to: small}
`

// selectTry selects a step and opens its "Try it".
func selectTry(t *testing.T, ctx context.Context, ref string) {
	t.Helper()
	run(t, ctx, "select "+ref, chromedp.Evaluate[chromedp.Void](`document.querySelector('g.node[data-ref="`+ref+`"]').dispatchEvent(new MouseEvent("click", {bubbles: true}))`),
		chromedp.WaitVisible(chromedp.CSS("#try-it > summary")),
		chromedp.Click(chromedp.CSS("#try-it > summary")),
		chromedp.WaitVisible(chromedp.CSS("#try-sample")))
}

// tryNow presses Try and waits for the results.
func tryNow(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, "clear the results", chromedp.Evaluate[chromedp.Void](`document.getElementById("try-results").innerHTML = ""`))
	run(t, ctx, "try", chromedp.Click(chromedp.CSS("#try-go")))
	waitFor(t, ctx, "the results", `!!document.querySelector("#try-list li") || !!document.getElementById("try-error")`)
}

// A step is tried against pinned sample data, from the draft as it
// stands: the transform's value and the branch its choice takes; the
// sample survives a reload; an earlier run's data is a sample too. A
// real test run waits for a published version.
func TestEditorTriesAStepAgainstPinnedData(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "pricing")
	if !boolJS(t, ctx, `document.getElementById("run-start").disabled && document.getElementById("run-start").getAttribute("aria-describedby") === "run-needs-version" && !!document.getElementById("run-needs-version")`) {
		t.Fatal("a real run is offered on a draft never published")
	}
	run(t, ctx, "write the document", chromedp.Evaluate[chromedp.Void](`(() => {
		const y = document.getElementById("yaml");
		y.value = `+"`"+editorTryDoc+"`"+`;
		y.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)

	// The sample starts in the shape the step reads: input and the steps
	// upstream.
	selectTry(t, ctx, "total")
	var pre map[string]any
	if err := json.Unmarshal([]byte(value(t, ctx, "#try-sample")), &pre); err != nil || pre["steps"].(map[string]any)["qty"] == nil {
		t.Fatalf("the prefilled sample: %v %v", pre, err)
	}
	run(t, ctx, "pin a sample", chromedp.Evaluate[chromedp.Void](`(() => {
		const a = document.getElementById("try-sample");
		a.value = '{"input": {"price": 30}, "steps": {"qty": {"output": {"n": 4}}}}';
		a.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	tryNow(t, ctx)
	if got := text(t, ctx, `#try-list li[data-path="with.expr"] .try-value`); got != "120" {
		t.Fatalf("the transform's value: %q\n%s", got, text(t, ctx, "#try-results"))
	}
	if got := text(t, ctx, "#try-outcome"); !strings.Contains(got, "→ big") {
		t.Fatalf("the outcome: %q", got)
	}
	if n := count(t, ctx, `#try-list li.taken[data-path="edges[1].choice[0].when"]`); n != 1 {
		t.Errorf("the first branch is not marked taken:\n%s", text(t, ctx, "#try-results"))
	}
	shoot(t, ctx, "editor-try")
	axeClean(t, ctx)

	// A bad expression says where and why.
	run(t, ctx, "break the sample", chromedp.Evaluate[chromedp.Void](`(() => {
		const a = document.getElementById("try-sample");
		a.value = '{"input": {"price": 30}, "steps": {}}';
		a.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	tryNow(t, ctx)
	if got := text(t, ctx, `#try-list li.failed[data-path="with.expr"] .try-error`); !strings.Contains(got, "qty") {
		t.Fatalf("the failing expression says %q", got)
	}
	run(t, ctx, "pin the good sample again", chromedp.Evaluate[chromedp.Void](`(() => {
		const a = document.getElementById("try-sample");
		a.value = '{"input": {"price": 30}, "steps": {"qty": {"output": {"n": 4}}}}';
		a.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))

	// The pinned sample is kept in this browser across a reload.
	run(t, ctx, "save the draft", chromedp.Click(chromedp.CSS("#save-draft")))
	waitFor(t, ctx, "the draft to be saved", `document.getElementById("notice").textContent.startsWith("Draft saved")`)
	run(t, ctx, "reload", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
	selectTry(t, ctx, "total")
	if got := value(t, ctx, "#try-sample"); !strings.Contains(got, `"price": 30`) || !strings.Contains(got, `"n": 4`) {
		t.Fatalf("after a reload the sample is:\n%s", got)
	}
	if got := text(t, ctx, "#try-pinned"); !strings.Contains(got, "Pinned") {
		t.Errorf("the pinned note says %q", got)
	}

	// Published and run, the run's data is a sample: picked from the
	// list, it is loaded and pinned, and Try reads it.
	run(t, ctx, "publish", chromedp.Click(chromedp.CSS("#publish")), chromedp.WaitVisible(chromedp.CSS("#notice[data-version]")))
	if boolJS(t, ctx, `document.getElementById("run-start").disabled || !!document.getElementById("run-needs-version")`) {
		t.Error("a test run is still refused once published")
	}
	raw, _ := json.Marshal(map[string]any{"definition": "pricing", "input": map[string]any{"price": 2, "n": 3}})
	code, out := api(t, p, "POST", "/runs", "application/json", string(raw))
	if code != http.StatusCreated {
		t.Fatalf("start a run: %d %v", code, out)
	}
	id := out["id"].(string)
	waitAPIStatus(t, p, id, "succeeded")
	run(t, ctx, "reload", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
	selectTry(t, ctx, "total")
	waitFor(t, ctx, "the run in the list", `!!document.querySelector('#try-run option[value="`+id+`"]')`)
	run(t, ctx, "pick the run", chromedp.Evaluate[chromedp.Void](`(() => {
		const s = document.getElementById("try-run");
		s.value = "`+id+`";
		s.dispatchEvent(new Event("change", {bubbles: true}));
	})()`))
	waitFor(t, ctx, "the run's sample", `document.getElementById("try-sample").value.includes('"price": 2')`)
	if got := value(t, ctx, "#try-sample"); !strings.Contains(got, `"qty"`) || !strings.Contains(got, `"n": 3`) {
		t.Fatalf("the run's sample:\n%s", got)
	}
	tryNow(t, ctx)
	if got := text(t, ctx, `#try-list li[data-path="with.expr"] .try-value`); got != "6" {
		t.Fatalf("the transform on the run's data: %q\n%s", got, text(t, ctx, "#try-results"))
	}
	if got := text(t, ctx, "#try-outcome"); !strings.Contains(got, "→ small") {
		t.Fatalf("the outcome on the run's data: %q", got)
	}
	shoot(t, ctx, "editor-try-run")
	axeClean(t, ctx)
}
