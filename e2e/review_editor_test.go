package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// shownFields says which of a step panel's `with` fields are drawn and
// visible.
func shownFields(t *testing.T, ctx context.Context, names ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, n := range names {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
			const el = document.querySelector('#panel [data-field="with.%s"]');
			return !!el && el.checkVisibility();
		})()`, n)))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = v
	}
	return out
}

// offered lists the values a picker's list offers, in order, with their
// notes.
func offered(t *testing.T, ctx context.Context, input string) []string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelectorAll(%q)].map((li) => li.dataset.value + " " + li.textContent.replace(li.dataset.value, "").trim())`, input+"-list li")))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A scatter in child_workflow mode, in the editor, in Chromium: its panel
// shows the child-workflow settings (workflow, version, input_expr) and
// not the inline ones (the `do` template, max_inline_children), and back
// in inline mode the other way round; `workflow` offers the tenant's
// definitions, each with its name and newest version, and `version` the
// picked definition's published versions, newest first; both picked land
// in the YAML. A subworkflow step's `workflow` offers the same
// definitions. Changing the mode drops the other mode's settings from the
// document (the compiler refuses them) and gives a scatter going inline
// the sample template.
func TestEditorScatterChildWorkflowFieldsAndDefinitionPickerInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	for _, doc := range []string{
		"key: restock_item\nname: Restock one item\nsteps:\n  - { ref: a, type: transform, with: { expr: '1' } }\n",
		"key: restock_item\nname: Restock one item\nsteps:\n  - { ref: a, type: transform, with: { expr: '2' } }\n",
		"key: billing\nsteps:\n  - { ref: b, type: transform, with: { expr: '3' } }\n",
	} {
		key := strings.TrimPrefix(strings.SplitN(doc, "\n", 2)[0], "key: ")
		if code, out := api(t, p, "POST", "/definitions/"+key+"/versions", "application/yaml", doc); code != http.StatusCreated {
			t.Fatalf("publish %s: %d %v", key, code, out)
		}
	}
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "fanout")
	waitFor(t, ctx, "the pickers' hints", `document.getElementById("panel").dataset.hints === "loaded"`)
	run(t, ctx, "add a scatter", chromedp.Click(chromedp.CSS(`.palette-item[data-type="scatter"]`)),
		chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="scatter_1"]`)))
	selectStep(t, ctx, "scatter_1")

	inline := []string{"do", "max_inline_children"}
	child := []string{"workflow", "version", "input_expr"}
	// check fails the test on a setting of the mode not shown, and
	// answers the settings of the other mode shown.
	check := func(t *testing.T, mode string, want, not []string) (wrong []string) {
		t.Helper()
		for n, v := range shownFields(t, ctx, want...) {
			if !v {
				t.Errorf("in %s mode the scatter's panel does not show %s", mode, n)
			}
		}
		for n, v := range shownFields(t, ctx, not...) {
			if v {
				wrong = append(wrong, n)
			}
		}
		slices.Sort(wrong)
		return wrong
	}
	// gap fails the test on the other mode's settings shown.
	gap := func(t *testing.T, mode string, wrong []string) {
		t.Helper()
		if len(wrong) > 0 {
			t.Errorf("in %s mode the scatter's panel also shows %v, the other mode's settings", mode, wrong)
		}
	}

	t.Run("inline mode", func(t *testing.T) {
		wrong := check(t, "inline", inline, child)
		shootPanel(t, ctx, "review-editor-scatter-inline", "#panel")
		gap(t, "inline", wrong)
	})

	t.Run("child_workflow mode", func(t *testing.T) {
		choose(t, ctx, "#f-with-mode", "child_workflow")
		waitFor(t, ctx, "the mode in the YAML", `document.getElementById("yaml").value.includes("mode: child_workflow")`)
		waitFor(t, ctx, "the panel redrawn", `!!document.querySelector('#panel [data-field="with.workflow"]')`)
		wrong := check(t, "child_workflow", child, inline)
		shootPanel(t, ctx, "review-editor-scatter-child-workflow", "#panel")
		gap(t, "child_workflow", wrong)
		if jsNum(ctx, t, `/^\s+do:/m.test(document.getElementById("yaml").value) ? 1 : 0`) != 0 {
			t.Error("the inline template stayed in the document in child_workflow mode")
		}
	})

	t.Run("definition picker", func(t *testing.T) {
		run(t, ctx, "open the workflow picker", chromedp.Focus(chromedp.CSS("#f-with-workflow")))
		waitFor(t, ctx, "the definitions offered", `!document.getElementById("f-with-workflow-list").hidden &&
			!!document.querySelector('#f-with-workflow-list li[data-value="restock_item"]')`)
		got := offered(t, ctx, "#f-with-workflow")
		if !containsPrefix(got, "restock_item Restock one item v2") || !containsPrefix(got, "billing v1") {
			t.Errorf("the workflow picker offers %q, want restock_item (Restock one item, v2) and billing (v1)", got)
		}
		shootPanel(t, ctx, "review-editor-workflow-picker", "#panel")
		pickFrom(t, ctx, "#f-with-workflow", "rest", "restock_item")
		waitFor(t, ctx, "the workflow in the YAML", `document.getElementById("yaml").value.includes("workflow: restock_item")`)

		run(t, ctx, "open the version picker", chromedp.Focus(chromedp.CSS("#f-with-version")))
		waitFor(t, ctx, "the versions offered", `!document.getElementById("f-with-version-list").hidden &&
			document.querySelectorAll("#f-with-version-list li").length > 0`)
		if got := offered(t, ctx, "#f-with-version"); len(got) != 2 || !strings.HasPrefix(got[0], "2 ") || !strings.HasPrefix(got[1], "1 ") {
			t.Errorf("the version picker offers %q, want restock_item's 2 then 1", got)
		}
		shootPanel(t, ctx, "review-editor-version-picker", "#panel")
		run(t, ctx, "pick version 1", chromedp.Click(chromedp.CSS(`#f-with-version-list li[data-value="1"]`), chromedp.NodeVisible))
		waitFor(t, ctx, "the version in the YAML", `document.getElementById("yaml").value.includes("version: 1")`)
		axeClean(t, ctx)
	})

	t.Run("back to inline", func(t *testing.T) {
		choose(t, ctx, "#f-with-mode", "inline")
		waitFor(t, ctx, "the mode in the YAML", `!document.getElementById("yaml").value.includes("mode: child_workflow")`)
		waitFor(t, ctx, "the panel redrawn", `!!document.querySelector('#panel [data-field="with.do"]')`)
		gap(t, "inline", check(t, "inline", inline, child))
		if !pollJS(ctx, `(() => { const y = document.getElementById("yaml").value;
			return /^\s+do:/m.test(y) && !y.includes("workflow: restock_item") && !y.includes("version: 1"); })()`) {
			y, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("yaml").value`))
			t.Fatalf("back in inline mode the document should have its template and no child settings:\n%s", y)
		}
		waitFor(t, ctx, "the document compiling", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	})

	t.Run("subworkflow", func(t *testing.T) {
		run(t, ctx, "add a subworkflow", chromedp.Click(chromedp.CSS(`.palette-item[data-type="subworkflow"]`)),
			chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="subworkflow_1"]`)))
		selectStep(t, ctx, "subworkflow_1")
		pickFrom(t, ctx, "#f-with-workflow", "bil", "billing")
		waitFor(t, ctx, "the workflow in the YAML", `document.getElementById("yaml").value.includes("workflow: billing")`)
		shootPanel(t, ctx, "review-editor-subworkflow-picker", "#panel")
	})
}

func containsPrefix(list []string, prefix string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

// pollJS polls a boolean expression for up to 10 s.
func pollJS(ctx context.Context, js string) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false
}
