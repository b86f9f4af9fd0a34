package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestEditorBuildsAndPublishesADefinition builds a definition from
// scratch in the visual editor: steps from the palette, connected by
// dragging and by the keyboard form; an error shows on its step and field
// and goes when fixed; a cycle is drawn in red; a YAML edit shows in the
// graph; the published version and hash are the API's.
func TestEditorBuildsAndPublishesADefinition(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "orders")

	for _, typ := range []string{"task", "transform", "condition"} {
		run(t, ctx, "add a "+typ, chromedp.Click(chromedp.CSS(`.palette-item[data-type="`+typ+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="`+typ+`_1"]`)))
	}
	dragConnect(t, ctx, "task_1", "transform_1")
	waitFor(t, ctx, "the dragged edge", `!!document.querySelector('g.edge[data-from="task_1"][data-to="transform_1"][data-on="success"]')`)
	connectByForm(t, ctx, "transform_1", "success", "condition_1")
	waitFor(t, ctx, "the YAML to follow the graph", `(() => {
		const y = document.getElementById("yaml").value;
		return ["handler: builtin.noop", "from: task_1", "to: transform_1", "to: condition_1"].every((s) => y.includes(s));
	})()`)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)

	// An error shows on its step and its field, and goes when fixed.
	run(t, ctx, "select task_1", chromedp.Click(chromedp.CSS(`g.node[data-ref="task_1"] rect`)),
		chromedp.WaitVisible(chromedp.CSS(`#panel [data-path="with.handler"]`)))
	typeInto(t, ctx, `#panel [data-path="with.handler"]`, "")
	waitFor(t, ctx, "the error on task_1", `!!document.querySelector('g.node.has-error[data-ref="task_1"]')`)
	if got := text(t, ctx, `#panel [data-field="with.handler"] .field-error.server`); !strings.Contains(got, "required") {
		t.Fatalf("the handler field says %q", got)
	}
	if n := count(t, ctx, "g.node.has-error"); n != 1 {
		t.Fatalf("%d steps show an error, want only task_1", n)
	}
	typeInto(t, ctx, `#panel [data-path="with.handler"]`, "builtin.echo")
	waitFor(t, ctx, "the error to go", `!document.querySelector('g.node.has-error') && document.getElementById("compile-state").textContent.startsWith("compiles")`)

	// A cycle is drawn in red, and goes with its edge.
	connectByForm(t, ctx, "condition_1", "false", "task_1")
	waitFor(t, ctx, "the cycle", `document.querySelectorAll('g.node.cycle').length === 3 && !!document.querySelector('g.edge.cycle[data-from="condition_1"]')`)
	run(t, ctx, "select the closing edge", chromedp.Evaluate[chromedp.Void](`document.querySelector('g.edge[data-from="condition_1"][data-to="task_1"] path.hit').dispatchEvent(new MouseEvent("click", {bubbles: true}))`),
		chromedp.Click(chromedp.CSS("#delete-edge"), chromedp.NodeVisible))
	waitFor(t, ctx, "the cycle to go", `!document.querySelector('g.node.cycle') && document.getElementById("compile-state").textContent.startsWith("compiles")`)

	// The YAML, edited, moves the graph.
	run(t, ctx, "edit the YAML", chromedp.Evaluate[chromedp.Void](`(() => {
		const y = document.getElementById("yaml");
		y.value = y.value.replace(/^steps:\n/m, "steps:\n- ref: notify\n  type: signal\n  with:\n    name: done\n")
			.replace(/^edges:\n/m, "edges:\n- from: condition_1\n  to: notify\n  on: \"true\"\n");
		y.dispatchEvent(new Event("input", {bubbles: true}));
	})()`))
	waitFor(t, ctx, "the graph to follow the YAML", `!!document.querySelector('g.node[data-ref="notify"][data-type="signal"]') && !!document.querySelector('g.edge[data-from="condition_1"][data-to="notify"][data-on="true"]')`)

	run(t, ctx, "publish", chromedp.Click(chromedp.CSS("#publish")),
		chromedp.WaitVisible(chromedp.CSS("#notice[data-version]")))
	version := attr(t, ctx, "#notice", "version")
	hash := attr(t, ctx, "#notice", "hash")
	waitFor(t, ctx, "the new version's row", `!!document.querySelector('#versions tr[data-version="1"]')`)

	code, body := get(t, p.BaseURL+"/api/v1/definitions/orders", p.devKey(t))
	var def struct {
		Versions []struct {
			Version      int    `json:"version"`
			ManifestHash string `json:"manifest_hash"`
		} `json:"versions"`
	}
	if err := json.Unmarshal([]byte(body), &def); code != 200 || err != nil || len(def.Versions) != 1 {
		t.Fatalf("GET the definition = %d %s", code, body)
	}
	if fmt.Sprint(def.Versions[0].Version) != version || def.Versions[0].ManifestHash != hash || len(hash) != 64 {
		t.Fatalf("the API has version %d hash %s; the editor showed v%s hash %s", def.Versions[0].Version, def.Versions[0].ManifestHash, version, hash)
	}

	run(t, ctx, "start a test run", chromedp.SetValue(chromedp.CSS("#run-input"), `{"amount": 5}`),
		chromedp.Click(chromedp.CSS("#run-start")),
		chromedp.WaitVisible(chromedp.CSS("#run-link")))
	runID := text(t, ctx, "#run-link")
	run(t, ctx, "open the run", chromedp.Click(chromedp.CSS("#run-link")),
		chromedp.WaitVisible(chromedp.CSS("#run-status")))
	if got := text(t, ctx, "#run-id"); got != runID || text(t, ctx, "#run-status") == "" {
		t.Fatalf("the run page shows run %q, status %q; started %q", got, text(t, ctx, "#run-status"), runID)
	}
}

// TestEditorOpensA200StepDefinition opens a published definition of 200
// steps: every step is drawn, laid out and compiled well under a second,
// and an edit in the panel reaches the YAML.
func TestEditorOpensA200StepDefinition(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "big")
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(async () => {
		const r = await fetch(document.getElementById("editor").dataset.publishUrl, {method: "POST",
			headers: {"X-CSRF-Token": document.getElementById("editor").dataset.csrf, Accept: "application/json"},
			body: new URLSearchParams({document: `+"`"+bigDefinition(200)+"`"+`})});
		return r.status;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || status != 201 {
		t.Fatalf("publish 200 steps = %d, %v", status, err)
	}
	run(t, ctx, "open it", chromedp.Navigate(p.BaseURL+"/t/dev/definitions/big/edit"),
		chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
	if n := count(t, ctx, "g.node"); n != 200 {
		t.Fatalf("%d steps drawn, want 200", n)
	}
	if n := count(t, ctx, "g.edge"); n < 199 {
		t.Fatalf("%d edges drawn, want at least 199", n)
	}
	// The bounds catch a drawing or round trip gone quadratic, not a slow
	// machine: the suite shares two cores with every other test.
	if ms := attrInt(t, ctx, "#editor", "renderMs"); ms > editorBoundMS {
		t.Errorf("drawing 200 steps took %d ms", ms)
	}

	run(t, ctx, "select step_150", chromedp.Evaluate[chromedp.Void](`document.querySelector('g.node[data-ref="step_150"]').dispatchEvent(new MouseEvent("click", {bubbles: true}))`),
		chromedp.WaitVisible(chromedp.CSS(`#panel [data-path="with.expr"]`)))
	typeInto(t, ctx, `#panel [data-path="with.expr"]`, `{"n": 150}`)
	// Each keystroke is a change (a CEL field takes any text), so the
	// wait is for the whole expression and the last check's answer.
	waitFor(t, ctx, "the YAML to follow the panel", `document.getElementById("yaml").value.includes('\\"n\\": 150}') &&
		!document.getElementById("compile-state").textContent.startsWith("checking")`)
	if ms := attrInt(t, ctx, "#editor", "checkMs"); ms > editorBoundMS {
		t.Errorf("the compile round trip of 200 steps took %d ms", ms)
	}
	if ms := attrInt(t, ctx, "#editor", "renderMs"); ms > editorBoundMS {
		t.Errorf("redrawing 200 steps took %d ms", ms)
	}
	if !strings.HasPrefix(text(t, ctx, "#compile-state"), "compiles") {
		t.Errorf("after the edit the editor says %q", text(t, ctx, "#compile-state"))
	}
}

// bigDefinition is n transform steps: a chain with a fork every tenth
// step that joins again.
func bigDefinition(n int) string {
	var b strings.Builder
	b.WriteString("key: big\nsteps:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - {ref: step_%d, type: transform, with: {expr: 'input'}}\n", i)
	}
	b.WriteString("edges:\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {from: step_%d, to: step_%d}\n", i, i+1)
		if i%10 == 0 && i+2 <= n {
			fmt.Fprintf(&b, "  - {from: step_%d, to: step_%d}\n", i, i+2)
		}
	}
	return b.String()
}

func devLogin(t *testing.T, ctx context.Context, p *program) {
	t.Helper()
	run(t, ctx, "dev login", chromedp.Navigate(p.BaseURL+"/login"),
		chromedp.Click(chromedp.CSS("#dev-login")),
		chromedp.WaitVisible(chromedp.CSS(".user-email")))
}

func createDefinition(t *testing.T, ctx context.Context, p *program, key string) {
	t.Helper()
	run(t, ctx, "create "+key, chromedp.Navigate(p.BaseURL+"/t/dev/definitions"),
		chromedp.SendKeys(chromedp.CSS("#new-key"), key),
		chromedp.Click(chromedp.CSS("#create-definition")),
		chromedp.WaitReady(chromedp.CSS(`#editor[data-ready="true"]`)))
}

// dragConnect drags from a step's output port onto another step.
func dragConnect(t *testing.T, ctx context.Context, from, to string) {
	t.Helper()
	// No check may be on its way: its answer redraws the graph.
	waitFor(t, ctx, "the editor's checks to settle", `!document.getElementById("compile-state").textContent.startsWith("checking")`)
	// The points are read once the graph has stood still for a few
	// frames: a layout or a refit still under way (a compile answer, a
	// resize) would move the nodes between the reading and the drag.
	js := fmt.Sprintf(`new Promise((resolve) => {
		const c = (el) => { const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; };
		const read = () => [...c(document.querySelector('g.node[data-ref=%q] .port.out')), ...c(document.querySelector('g.node[data-ref=%q] rect'))];
		let last = "", still = 0;
		const frame = () => {
			const p = read(), key = p.join(",");
			still = key === last ? still + 1 : 0;
			last = key;
			if (still >= 5) { resolve(p); } else { requestAnimationFrame(frame); }
		};
		requestAnimationFrame(frame);
	})`, from, to)
	pts, err := chromedp.Run(ctx, chromedp.Evaluate[[4]float64](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("find %s and %s: %v", from, to, err)
	}
	held := func(p *input.DispatchMouseEventParams) { p.Button, p.Buttons = input.MouseButtonLeft, 1 }
	run(t, ctx, "drag "+from+" to "+to,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pts[0], pts[1]),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, pts[0], pts[1], held, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (pts[0]+pts[2])/2, (pts[1]+pts[3])/2, held),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pts[2], pts[3], held),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, pts[2], pts[3], held, chromedp.ClickCount(1)))
}

// connectByForm connects two steps with the keyboard-reachable form.
func connectByForm(t *testing.T, ctx context.Context, from, on, to string) {
	t.Helper()
	run(t, ctx, "connect "+from+" to "+to, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const f = document.getElementById("connect-from");
		f.value = %q; f.dispatchEvent(new Event("change", {bubbles: true}));
		document.getElementById("connect-on").value = %q;
		document.getElementById("connect-to").value = %q;
	})()`, from, on, to)), chromedp.Click(chromedp.CSS("#connect-add")))
}

// typeInto replaces a field's text by typing, as a person would.
func typeInto(t *testing.T, ctx context.Context, css, s string) {
	t.Helper()
	run(t, ctx, "select "+css, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.focus(); e.select(); })()`, css)))
	keys := s
	if keys == "" {
		keys = "\b"
	}
	run(t, ctx, "type into "+css, chromedp.KeyEvent(keys))
}

func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	waitForWithin(t, ctx, 15*time.Second, what, js)
}

// waitForWithin is waitFor for what takes the server longer on a loaded
// machine (a batch of a thousand runs, say).
func waitForWithin(t *testing.T, ctx context.Context, d time.Duration, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(d))); err != nil {
		t.Fatalf("wait for %s: %v", what, err)
	}
}

func count(t *testing.T, ctx context.Context, css string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, css)))
	if err != nil {
		t.Fatalf("count %s: %v", css, err)
	}
	return n
}

func attr(t *testing.T, ctx context.Context, css, name string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).dataset[%q] || ""`, css, name)))
	if err != nil {
		t.Fatalf("read %s data-%s: %v", css, name, err)
	}
	return v
}

func attrInt(t *testing.T, ctx context.Context, css, name string) int {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`Number(document.querySelector(%q).dataset[%q] || -1)`, css, name)))
	if err != nil {
		t.Fatalf("read %s data-%s: %v", css, name, err)
	}
	return v
}

// editorBoundMS bounds the editor's drawing and compile round trip of 200
// steps, far above what an idle machine takes.
const editorBoundMS = 4000
