package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// After a field edit, the first click on another step selects it (the
// field's commit as it loses focus does not redraw the graph under the
// pointer), and the first Undo takes the edit back (the commit pushes no
// second undo step); a burst of typing in one field is one undo step.
func TestEditorClickAndUndoAfterAFieldEdit(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "clicks")
	for _, typ := range []string{"task", "transform"} {
		run(t, ctx, "add a "+typ, chromedp.Click(chromedp.CSS(`.palette-item[data-type="`+typ+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="`+typ+`_1"]`)))
	}
	waitFor(t, ctx, "the editor's checks to settle", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	run(t, ctx, "select task_1", chromedp.Click(chromedp.CSS(`g.node[data-ref="task_1"] rect`)),
		chromedp.WaitVisible(chromedp.CSS(`#panel [data-path="with.handler"]`)))
	typeInto(t, ctx, `#panel [data-path="with.handler"]`, "pay.charge")
	waitFor(t, ctx, "the edit to reach the YAML", `document.getElementById("yaml").value.includes("handler: pay.charge")`)

	// One real click on the other step, while the field has the focus.
	run(t, ctx, "click transform_1", chromedp.Click(chromedp.CSS(`g.node[data-ref="transform_1"] rect`)))
	waitFor(t, ctx, "the panel to show transform_1", `document.querySelector('#panel [data-path="ref"]').value === "transform_1"`)

	run(t, ctx, "undo once", chromedp.Click(chromedp.CSS("#undo")))
	waitFor(t, ctx, "the typed handler to be undone", `!document.getElementById("yaml").value.includes("pay.")`)
	if y := value(t, ctx, "#yaml"); !strings.Contains(y, "handler: builtin.noop") {
		t.Fatalf("one undo should restore the handler as it was before the typing:\n%s", y)
	}
	shoot(t, ctx, "editor-click-undo")
}
