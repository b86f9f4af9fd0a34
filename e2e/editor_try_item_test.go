package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// editorTryItemDoc says, for each order, whether it is overdue at now.
const editorTryItemDoc = `key: dues
steps:
  - ref: each
    type: transform
    for_each: input.orders
    with: {expr: 'item.id + (now > timestamp(item.due) ? " overdue" : " on time")'}
`

const editorTryItemSample = `{"input": {"orders": [{"id": "a", "due": "2030-01-01T00:00:00Z"}, {"id": "b", "due": "2020-01-01T00:00:00Z"}, {"id": "c", "due": "2040-01-01T00:00:00Z"}]}}`

// chooseItem picks an item in "Try it", which tries again, and waits for
// the results.
func chooseItem(t *testing.T, ctx context.Context, index string) {
	t.Helper()
	run(t, ctx, "clear the results", chromedp.Evaluate[chromedp.Void](`document.getElementById("try-results").innerHTML = ""`))
	choose(t, ctx, "#try-item", index)
	waitFor(t, ctx, "the results", `!!document.querySelector("#try-list li") || !!document.getElementById("try-error")`)
}

// "Try it" on a step over a list offers the list's items, found by a
// try, and evaluates the expressions on the one chosen; now is the
// server's clock unless set; both are pinned with the sample across a
// reload.
func TestEditorTryChoosesTheItemAndTheTime(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "dues")
	setYAML(t, ctx, editorTryItemDoc)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	selectTry(t, ctx, "each")
	result := func() string { return text(t, ctx, `#try-list li[data-path="with.expr"] .try-value`) }

	if got := count(t, ctx, "#try-item option"); got != 1 {
		t.Errorf("before a try the item select offers %d items", got)
	}
	run(t, ctx, "pin a sample", chromedp.Evaluate[chromedp.Void](`(() => {
		const a = document.getElementById("try-sample");
		a.value = `+"`"+editorTryItemSample+"`"+`;
		a.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	tryNow(t, ctx)
	if got := result(); got != `"a on time"` {
		t.Fatalf("the first item: %s\n%s", got, text(t, ctx, "#try-results"))
	}
	if got := text(t, ctx, "#try-item"); count(t, ctx, "#try-item option") != 3 || !strings.Contains(got, `1: {"due":"2020-01-01T00:00:00Z","id":"b"}`) {
		t.Errorf("after a try the item select offers %q", got)
	}

	// Another item, then another time.
	chooseItem(t, ctx, "1")
	if got := result(); got != `"b overdue"` {
		t.Fatalf("item 1: %s\n%s", got, text(t, ctx, "#try-results"))
	}
	typeInto(t, ctx, "#try-now", "2035-06-01T00:00:00Z")
	chooseItem(t, ctx, "0")
	if got := result(); got != `"a overdue"` {
		t.Fatalf("item 0 in 2035: %s\n%s", got, text(t, ctx, "#try-results"))
	}
	if got := text(t, ctx, "#try-at"); !strings.Contains(got, "2035-06-01T00:00:00Z") || !strings.Contains(got, "index 0") {
		t.Errorf("the results say they were at %q", got)
	}
	chooseItem(t, ctx, "2")
	if got := result(); got != `"c on time"` {
		t.Fatalf("item 2 in 2035: %s", got)
	}
	shootPanel(t, ctx, "editor-try-item", "#try-item")
	axeClean(t, ctx)

	// A malformed time is refused, saying what it must be; "Use the time
	// now" writes one.
	typeInto(t, ctx, "#try-now", "next tuesday")
	tryNow(t, ctx)
	if got := text(t, ctx, "#try-error"); !strings.Contains(got, "RFC 3339") {
		t.Errorf("a malformed now: %q", got)
	}
	run(t, ctx, "use the time now", chromedp.Click(chromedp.CSS("#try-now-set")))
	if got := value(t, ctx, "#try-now"); !strings.HasPrefix(got, "20") || !strings.HasSuffix(got, "Z") {
		t.Errorf("the time now reads %q", got)
	}
	typeInto(t, ctx, "#try-now", "2035-06-01T00:00:00Z")

	// Pinned: after a reload the item (not yet listed) and the time are
	// those chosen.
	run(t, ctx, "save the draft", chromedp.Click(chromedp.CSS("#save-draft")))
	waitFor(t, ctx, "the draft to be saved", `document.getElementById("notice").textContent.startsWith("Draft saved")`)
	run(t, ctx, "reload", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
	selectTry(t, ctx, "each")
	if got := value(t, ctx, "#try-item") + " " + value(t, ctx, "#try-now"); got != "2 2035-06-01T00:00:00Z" {
		t.Fatalf("after a reload the item and now read %q", got)
	}
	tryNow(t, ctx)
	if got := result(); got != `"c on time"` {
		t.Fatalf("after a reload: %s", got)
	}
	run(t, ctx, "reset the sample", chromedp.Click(chromedp.CSS("#try-reset")))
	if got := value(t, ctx, "#try-item") + " " + value(t, ctx, "#try-now"); got != "0 " {
		t.Errorf("after a reset the item and now read %q", got)
	}
}
