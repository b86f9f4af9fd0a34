package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// setYAML replaces the text pane's document, as typing would.
func setYAML(t *testing.T, ctx context.Context, src string) {
	t.Helper()
	run(t, ctx, "edit the YAML", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const y = document.getElementById("yaml");
		y.value = %q;
		y.dispatchEvent(new Event("input", {bubbles: true}));
	})()`, src)))
}

// pressEnter presses Enter as a key, down and up: chromedp's KeyEvent
// also sends the character as an event of its own, which a keydown
// handler cannot cancel as it can a real keyboard's.
func pressEnter(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, input.DispatchKeyEventParams{
			Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13,
		}); err != nil {
			t.Fatalf("press Enter: %v", err)
		}
	}
}

// axeClean fails the test on any serious or critical axe-core finding.
func axeClean(t *testing.T, ctx context.Context) {
	t.Helper()
	var found []string
	for _, v := range axeCheck(t, ctx) {
		found = append(found, fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; ")))
	}
	if len(found) > 0 {
		t.Fatalf("%d serious or critical accessibility findings:\n%s", len(found), strings.Join(found, "\n"))
	}
}

// The text pane numbers its lines in a gutter that scrolls with the
// text; a compiler problem's line (from its path) and a parse error's
// line (from the parser) are marked, and clicking a problem puts the
// cursor on its line.
func TestEditorSourceMarksProblemLines(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "lines")

	var b strings.Builder
	b.WriteString("key: lines\nsteps:\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "  - ref: step_%d\n    type: transform\n    with:\n      expr: input\n", i)
	}
	b.WriteString("  - ref: fetch\n    type: http\n    with:\n      url: not a url\n  - ref: work\n    type: task\n    with: {}\n")
	src := b.String()
	urlLine := 2 + 12*4 + 4 // "url: not a url"
	withLine := urlLine + 3 // "with: {}" of work: its handler is missing
	setYAML(t, ctx, src)
	waitFor(t, ctx, "the two problems", `document.querySelectorAll("#problems li").length === 2`)
	waitFor(t, ctx, "their lines marked in the gutter", fmt.Sprintf(`(() => {
		const err = [...document.querySelectorAll(".gutter .ln.err")].map((e) => Number(e.textContent));
		return err.join(",") === "%d,%d" && document.querySelectorAll(".gutter .ln").length === %d;
	})()`, urlLine, withLine, strings.Count(src, "\n")+1))
	if got := text(t, ctx, `#problems li[data-path="steps[12].with.url"] .line`); got != fmt.Sprintf("line %d", urlLine) {
		t.Fatalf("the URL problem says %q", got)
	}

	// Clicking a problem selects its step and puts the cursor on its line,
	// scrolled into view with the gutter beside it.
	run(t, ctx, "click the handler problem", chromedp.Click(chromedp.CSS(`#problems li[data-path="steps[13].with.handler"]`)))
	waitFor(t, ctx, "the cursor on its line", fmt.Sprintf(`(() => {
		const y = document.getElementById("yaml");
		const line = y.value.slice(0, y.selectionStart).split("\n").length;
		return document.activeElement === y && line === %d && y.scrollTop > 0;
	})()`, withLine))
	waitFor(t, ctx, "the panel on the step", `document.querySelector('#panel [data-path="ref"]').value === "work"`)
	aligned := `(() => {
		const y = document.getElementById("yaml");
		const lh = parseFloat(getComputedStyle(y).lineHeight);
		const top = y.getBoundingClientRect().top + parseFloat(getComputedStyle(y).paddingTop);
		const ln = [...document.querySelectorAll(".gutter .ln")].find((e) => Number(e.textContent) === %d);
		const want = top + (%d - 1) * lh - y.scrollTop;
		return Math.abs(ln.getBoundingClientRect().top - want) < 1.5;
	})()`
	waitFor(t, ctx, "the gutter scrolled with the text", fmt.Sprintf(aligned, withLine, withLine))
	shoot(t, ctx, "editor-source-problems")

	// A parse error is marked where the parser stopped.
	setYAML(t, ctx, "key: lines\nsteps:\n  - ref: a\n   type: task\n")
	waitFor(t, ctx, "the parse error on line 4", `(() => {
		const li = document.querySelector("#problems li");
		const err = [...document.querySelectorAll(".gutter .ln.err")].map((e) => e.textContent);
		return !!li && li.dataset.line === "4" && err.join(",") === "4";
	})()`)
	run(t, ctx, "focus the parse error", chromedp.Focus(chromedp.CSS("#problems li")))
	pressEnter(t, ctx)
	waitFor(t, ctx, "the cursor on line 4", `(() => {
		const y = document.getElementById("yaml");
		return document.activeElement === y && y.value.slice(0, y.selectionStart).split("\n").length === 4;
	})()`)
	shoot(t, ctx, "editor-source-parse-error")
	axeClean(t, ctx)
}
