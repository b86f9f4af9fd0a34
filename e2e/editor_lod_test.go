package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// readableJS holds when every step's ref is drawn at least 10 px high on
// screen, inside its box, and names it (shortened at most in the middle).
const readableJS = `(() => {
	const k = Number(document.getElementById("graph").dataset.scale);
	const nodes = [...document.querySelectorAll("g.node")];
	return nodes.length > 0 && nodes.every((n) => {
		const t = n.querySelector("text.ref"), r = n.querySelector("rect");
		if (!t) return false;
		const px = parseFloat(getComputedStyle(t).fontSize) * k;
		const tb = t.getBoundingClientRect(), rb = r.getBoundingClientRect();
		const ref = n.dataset.ref, s = t.textContent;
		const named = s === ref || (s.includes("…") && ref.startsWith(s.split("…")[0]) && ref.endsWith(s.split("…")[1]));
		return px >= 10 && tb.left >= rb.left - 0.5 && tb.right <= rb.right + 0.5 && named;
	});
})()`

// At Fit, a graph too big for its boxes' full text at 10 px draws them
// compact, each ref alone at a readable size, up to 100 steps at 1440 px;
// zoomed in, the boxes are full again.
func TestEditorLabelsStayReadableAtFit(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	run(t, ctx, "1440 px wide", chromedp.EmulateViewport(1440, 900))
	for _, n := range []int{29, 100} {
		key := fmt.Sprintf("steps%d", n)
		openBig(t, ctx, p, key, n)
		run(t, ctx, "1440 px wide", chromedp.EmulateViewport(1440, 900))
		run(t, ctx, "fit", chromedp.Click(chromedp.CSS("#zoom-fit")))
		waitFor(t, ctx, fmt.Sprintf("%d steps compact at Fit", n), `document.getElementById("graph").dataset.lod === "compact" &&
			Number(document.getElementById("graph").dataset.scale) < 0.8`)
		waitFor(t, ctx, fmt.Sprintf("every ref of %d readable", n), readableJS)
		if got := count(t, ctx, "g.node text.sub"); got != 0 {
			t.Fatalf("%d compact boxes still draw their small second line", got)
		}
		if n == 100 {
			shoot(t, ctx, "editor-lod-100")
			run(t, ctx, "1440 px wide", chromedp.EmulateViewport(1440, 900))
			run(t, ctx, "fit", chromedp.Click(chromedp.CSS("#zoom-fit")))
			waitFor(t, ctx, "every ref readable after the screenshots", readableJS)
			axeClean(t, ctx)
		}
	}
	for i := 0; i < 12 && attr(t, ctx, "#graph", "lod") != "full"; i++ {
		run(t, ctx, "zoom in", chromedp.Click(chromedp.CSS("#zoom-in")))
	}
	waitFor(t, ctx, "full boxes zoomed in", `document.getElementById("graph").dataset.lod === "full" &&
		document.querySelectorAll("g.node text.sub").length === 100 && Number(document.getElementById("graph").dataset.scale) >= 0.8`)
}
