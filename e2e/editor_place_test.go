package e2e

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// dragNode drags a step's box by dx, dy pixels on the screen.
func dragNode(t *testing.T, ctx context.Context, ref string, dx, dy float64) {
	t.Helper()
	waitFor(t, ctx, "the editor's checks to settle", `!document.getElementById("compile-state").textContent.startsWith("checking")`)
	pt, err := chromedp.Run(ctx, chromedp.Evaluate[[2]float64](fmt.Sprintf(`(() => {
		const r = document.querySelector('g.node[data-ref=%q] rect').getBoundingClientRect();
		return [r.x + 40, r.y + r.height / 2];
	})()`, ref)))
	if err != nil {
		t.Fatalf("find %s: %v", ref, err)
	}
	held := func(p *input.DispatchMouseEventParams) { p.Button, p.Buttons = input.MouseButtonLeft, 1 }
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pt[0], pt[1]),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, pt[0], pt[1], held, chromedp.ClickCount(1)),
	}
	for i := 1; i <= 6; i++ {
		f := float64(i) / 6
		steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pt[0]+dx*f, pt[1]+dy*f, held))
	}
	steps = append(steps, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, pt[0]+dx, pt[1]+dy, held, chromedp.ClickCount(1)))
	run(t, ctx, "drag "+ref, steps...)
}

// noOverlapJS holds when no two steps' boxes overlap.
const noOverlapJS = `(() => {
	const r = [...document.querySelectorAll("g.node rect")].map((e) => e.getBoundingClientRect());
	for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) {
		const a = r[i], b = r[j];
		if (a.x < b.right && b.x < a.right && a.y < b.bottom && b.y < a.bottom) return false;
	}
	return r.length > 0;
})()`

// A step dragged is placed by hand: its place is kept in the document's
// layout, which the compiler ignores (the hash stays), and read back when
// the editor opens again; a new step goes to free space; Auto place
// forgets the places.
func TestEditorKeepsManualPlacement(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "placed")
	for _, typ := range []string{"task", "transform"} {
		run(t, ctx, "add a "+typ, chromedp.Click(chromedp.CSS(`.palette-item[data-type="`+typ+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="`+typ+`_1"]`)))
	}
	connectByForm(t, ctx, "task_1", "success", "transform_1")
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	hash := text(t, ctx, "#compile-state")
	if n := count(t, ctx, "#layout-auto:not([hidden])"); n != 0 {
		t.Fatalf("Auto place shows with nothing placed by hand")
	}

	before := jsNum(ctx, t, `document.querySelector('g.node[data-ref="transform_1"] rect').getBoundingClientRect().y - document.getElementById("graph").getBoundingClientRect().y`)
	dragNode(t, ctx, "transform_1", 20, 160)
	waitFor(t, ctx, "the place in the YAML", `/^layout:\n  transform_1:\n    x: -?\d+\n    "?y"?: -?\d+$/m.test(document.getElementById("yaml").value)`)
	waitFor(t, ctx, "the hash unchanged", fmt.Sprintf(`document.getElementById("compile-state").textContent === %q`, hash))
	after := jsNum(ctx, t, `document.querySelector('g.node[data-ref="transform_1"] rect').getBoundingClientRect().y - document.getElementById("graph").getBoundingClientRect().y`)
	if d := after - before; d < 150 || d > 170 {
		t.Fatalf("the step moved %.0f px down, want 160", d)
	}
	if n := count(t, ctx, "#layout-auto:not([hidden])"); n != 1 {
		t.Fatalf("no Auto place button once a step is placed")
	}

	// A new step goes to free space, and is placed too.
	run(t, ctx, "add a condition", chromedp.Click(chromedp.CSS(`.palette-item[data-type="condition"]`)),
		chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="condition_1"]`)))
	waitFor(t, ctx, "no two steps overlap", noOverlapJS)
	waitFor(t, ctx, "the new step placed", `/^  condition_1:\n    x: -?\d+\n    "?y"?: -?\d+$/m.test(document.getElementById("yaml").value)`)
	dragNode(t, ctx, "task_1", 0, 200)
	waitFor(t, ctx, "task_1 placed", `/^  task_1:\n/m.test(document.getElementById("yaml").value)`)
	waitFor(t, ctx, "the checks to settle", `document.getElementById("compile-state").textContent.startsWith("compiles")`)

	// Saved and opened again, the steps are where they were put.
	placeJS := `[...document.querySelectorAll("g.node")].map((n) => n.dataset.ref + "@" + n.getAttribute("transform")).sort().join(" ")`
	was, err := chromedp.Run(ctx, chromedp.Evaluate[string](placeJS))
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "save the draft", chromedp.Click(chromedp.CSS("#save-draft")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	waitFor(t, ctx, "the draft saved", `document.getElementById("notice").textContent.startsWith("Draft saved")`)
	run(t, ctx, "open it again", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
	now, err := chromedp.Run(ctx, chromedp.Evaluate[string](placeJS))
	if err != nil || now != was {
		t.Fatalf("opened again the steps are at\n%s\nnot\n%s (%v)", now, was, err)
	}
	if !regexp.MustCompile(`transform_1@translate\(-?\d+,-?\d+\)`).MatchString(now) {
		t.Fatalf("places %s", now)
	}
	shoot(t, ctx, "editor-placed")
	axeClean(t, ctx)

	run(t, ctx, "auto place", chromedp.Click(chromedp.CSS("#layout-auto")))
	waitFor(t, ctx, "the layout gone", `!document.getElementById("yaml").value.includes("layout:") && document.getElementById("layout-auto").hidden`)
	waitFor(t, ctx, "no two steps overlap", noOverlapJS)
}

// A step moves from the keyboard too: Alt+arrow moves the focused step
// (Shift+Alt four times as far), placing it by hand as a drag does, and
// the focus stays on it.
func TestEditorMovesAStepFromTheKeyboard(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "keyed")
	run(t, ctx, "add a task", chromedp.Click(chromedp.CSS(`.palette-item[data-type="task"]`)),
		chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="task_1"]`)))
	waitFor(t, ctx, "the editor's checks to settle", `!document.getElementById("compile-state").textContent.startsWith("checking")`)
	yOf := `(() => { const m = /translate\((-?[\d.]+),\s*(-?[\d.]+)\)/.exec(document.querySelector('g.node[data-ref="task_1"]').getAttribute("transform")); return Number(m[2]); })()`
	before := jsNum(ctx, t, yOf)
	run(t, ctx, "focus the step", chromedp.Evaluate[chromedp.Void](`document.querySelector('g.node[data-ref="task_1"]').focus()`))
	run(t, ctx, "Alt+Down twice, Shift+Alt+Down once",
		chromedp.KeyEvent(kb.ArrowDown, chromedp.KeyModifiers(chromedp.ModifierAlt)),
		chromedp.KeyEvent(kb.ArrowDown, chromedp.KeyModifiers(chromedp.ModifierAlt)),
		chromedp.KeyEvent(kb.ArrowDown, chromedp.KeyModifiers(chromedp.ModifierAlt, chromedp.ModifierShift)))
	waitFor(t, ctx, "the place in the YAML", `/^layout:\n  task_1:\n/m.test(document.getElementById("yaml").value)`)
	waitFor(t, ctx, "the step 120 lower", fmt.Sprintf(`Math.abs(%s - %f - 120) < 1`, yOf, before))
	waitFor(t, ctx, "the focus still on the step", `document.activeElement && document.activeElement.dataset.ref === "task_1"`)
}
