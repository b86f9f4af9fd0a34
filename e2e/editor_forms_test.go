package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ductor/ductor/app/definition"
)

// selectStep finds a step with the search box and waits for its panel.
func selectStep(t *testing.T, ctx context.Context, ref string) {
	t.Helper()
	searchFor(t, ctx, ref)
	pressEnter(t, ctx)
	waitFor(t, ctx, "the panel of "+ref, fmt.Sprintf(`document.querySelector('#panel [data-path="ref"]')?.value === %q`, ref))
}

// choose sets a select as a person picking an option does.
func choose(t *testing.T, ctx context.Context, css, value string) {
	t.Helper()
	run(t, ctx, "choose "+value+" in "+css, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const s = document.querySelector(%q); s.focus(); s.value = %q;
		s.dispatchEvent(new Event("input", {bubbles: true})); s.dispatchEvent(new Event("change", {bubbles: true}));
	})()`, css, value)))
}

// pickFrom opens a picker by typing q into it and clicks its suggestion
// value.
func pickFrom(t *testing.T, ctx context.Context, input, q, value string) {
	t.Helper()
	typeInto(t, ctx, input, q)
	opt := fmt.Sprintf(`%s-list li[data-value=%q]`, input, value)
	waitFor(t, ctx, value+" offered", fmt.Sprintf(`!document.querySelector(%q).hidden && !!document.querySelector(%q)`, input+"-list", opt))
	run(t, ctx, "pick "+value, chromedp.Click(chromedp.CSS(opt), chromedp.NodeVisible))
}

// A six-step workflow built from an empty editor with no JSON typed: a
// task whose handler comes from the handler picker, a scatter whose `do`
// is set through its sub-form, a gather whose scatter_ref is picked from
// the scatters upstream, an approval whose approver is picked from the
// tenant's members, a human_loop whose case form is built row by row, and
// a final step. The published version compiles with those settings.
func TestEditorBuildsWithSubFormsAndPickers(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "intake")
	waitFor(t, ctx, "the pickers' hints", `document.getElementById("panel").dataset.hints === "loaded"`)

	types := []string{"task", "scatter", "gather", "approval", "human_loop", "transform"}
	for _, typ := range types {
		run(t, ctx, "add a "+typ, chromedp.Click(chromedp.CSS(`.palette-item[data-type="`+typ+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="`+typ+`_1"]`)))
	}
	for i := 0; i+1 < len(types); i++ {
		on := "success"
		if types[i] == "approval" {
			on = "approved"
		}
		connectByForm(t, ctx, types[i]+"_1", on, types[i+1]+"_1")
	}

	// The task's handler, from the built-in handlers offered.
	selectStep(t, ctx, "task_1")
	pickFrom(t, ctx, "#f-with-handler", "ech", "builtin.echo")
	waitFor(t, ctx, "the handler in the YAML", `document.getElementById("yaml").value.includes("handler: builtin.echo")`)

	// The scatter's template: a task, its handler picked, three attempts.
	selectStep(t, ctx, "scatter_1")
	choose(t, ctx, "#f-with-do-type", "task")
	waitFor(t, ctx, "the task template's fields", `!!document.querySelector("#f-with-do-with-handler") && !!document.querySelector("#f-with-do-retry-max_attempts")`)
	pickFrom(t, ctx, "#f-with-do-with-handler", "sle", "builtin.sleep")
	typeInto(t, ctx, "#f-with-do-retry-max_attempts", "3")
	waitFor(t, ctx, "the template in the YAML", `(() => { const y = document.getElementById("yaml").value;
		return y.includes("handler: builtin.sleep") && y.includes("max_attempts: 3") && !y.includes("expr: item"); })()`)
	// The same value as JSON, one toggle away, and back.
	run(t, ctx, "show do as JSON", chromedp.Click(chromedp.CSS("#f-with-do-json")))
	waitFor(t, ctx, "the JSON of do", `(() => { const v = document.querySelector("textarea#f-with-do")?.value || "";
		return v.includes('"builtin.sleep"') && v.includes('"max_attempts": 3'); })()`)
	run(t, ctx, "back to the form", chromedp.Click(chromedp.CSS("#f-with-do-json")))
	waitFor(t, ctx, "the form of do", `document.querySelector("#f-with-do-with-handler")?.value === "builtin.sleep"`)
	shoot(t, ctx, "editor-forms-scatter")

	// The gather: the one scatter upstream is offered.
	selectStep(t, ctx, "gather_1")
	run(t, ctx, "open the scatter picker", chromedp.Focus(chromedp.CSS("#f-with-scatter_ref")))
	waitFor(t, ctx, "scatter_1 alone offered", `document.querySelectorAll("#f-with-scatter_ref-list li").length === 1 &&
		!document.getElementById("f-with-scatter_ref-list").hidden`)
	run(t, ctx, "pick scatter_1", chromedp.Click(chromedp.CSS(`#f-with-scatter_ref-list li[data-value="scatter_1"]`), chromedp.NodeVisible))
	waitFor(t, ctx, "the scatter_ref in the YAML", `document.getElementById("yaml").value.includes("scatter_ref: scatter_1")`)

	// The approval: a member picked with the keyboard, added to role:admin.
	selectStep(t, ctx, "approval_1")
	typeInto(t, ctx, "#f-with-approvers-add", "dev@")
	waitFor(t, ctx, "the member offered", `!!document.querySelector('#f-with-approvers-add-list li[data-value="dev@localhost"][aria-selected="true"]')`)
	pressEnter(t, ctx)
	waitFor(t, ctx, "the approvers in the YAML", `(() => { const y = document.getElementById("yaml").value;
		return y.includes("- role:admin") && y.includes("- dev@localhost"); })()`)

	// The human_loop's case form: two fields, the second moved first.
	selectStep(t, ctx, "human_loop_1")
	run(t, ctx, "add a case field", chromedp.Click(chromedp.CSS("#f-with-fields-add")))
	row := func(n int, col string) string {
		return fmt.Sprintf("#f-with-fields .row:nth-child(%d) [data-col=%s]", n, col)
	}
	run(t, ctx, "name it", chromedp.SendKeys(chromedp.CSS(row(1, "name")), "decision"),
		chromedp.SendKeys(chromedp.CSS(row(1, "title")), "Decision"))
	choose(t, ctx, row(1, "type"), "enum")
	run(t, ctx, "its options, required", chromedp.SendKeys(chromedp.CSS(row(1, "options")), "approve, deny", chromedp.NodeVisible),
		chromedp.Click(chromedp.CSS(row(1, "required"))))
	run(t, ctx, "add another", chromedp.Click(chromedp.CSS("#f-with-fields-add")))
	run(t, ctx, "name it", chromedp.SendKeys(chromedp.CSS(row(2, "name")), "note"),
		chromedp.SendKeys(chromedp.CSS(row(2, "title")), "Note"))
	run(t, ctx, "move it up", chromedp.Click(chromedp.CSS(`#f-with-fields .row:nth-child(2) [data-row="up"]`)))
	waitFor(t, ctx, "the case fields in the YAML", `(() => { const y = document.getElementById("yaml").value;
		return y.includes("title: Decision") && y.includes("- approve") && y.includes("title: Note") && y.indexOf("note:") < y.indexOf("decision:"); })()`)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	shoot(t, ctx, "editor-forms-case")
	axeClean(t, ctx)

	run(t, ctx, "publish", chromedp.Click(chromedp.CSS("#publish")), chromedp.WaitVisible(chromedp.CSS("#notice[data-version]")))
	code, body := get(t, p.BaseURL+"/api/v1/definitions/intake/versions/1", p.devKey(t))
	var v struct {
		ManifestHash string               `json:"manifest_hash"`
		Manifest     *definition.Manifest `json:"manifest"`
		Source       string               `json:"source"`
	}
	if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil || v.Manifest == nil {
		t.Fatalf("GET the version = %d %s", code, body)
	}
	c, err := definition.Compile([]byte(v.Source), definition.FormatAuto)
	if err != nil || c.Hash != v.ManifestHash {
		t.Fatalf("the published source compiles to %v (%v), want hash %s", c, err, v.ManifestHash)
	}
	step := func(ref string) definition.Step {
		s, ok := v.Manifest.Step(ref)
		if !ok {
			t.Fatalf("no step %s", ref)
		}
		return *s
	}
	js := func(x any) string { b, _ := json.Marshal(x); return string(b) }
	if h := step("task_1").With["handler"]; h != "builtin.echo" {
		t.Errorf("task_1's handler = %v", h)
	}
	do, _ := step("scatter_1").With["do"].(map[string]any)
	if got := js(do["type"]) + js(do["with"].(map[string]any)["handler"]) + js(do["retry"].(map[string]any)["max_attempts"]); got != `"task""builtin.sleep"3` {
		t.Errorf("scatter_1's do = %s", js(do))
	}
	if r := step("gather_1").With["scatter_ref"]; r != "scatter_1" {
		t.Errorf("gather_1's scatter_ref = %v", r)
	}
	if a := js(step("approval_1").With["approvers"]); a != `["role:admin","dev@localhost"]` {
		t.Errorf("approval_1's approvers = %s", a)
	}
	fields, _ := step("human_loop_1").With["fields"].(map[string]any)
	props, _ := fields["properties"].(map[string]any)
	if got := js(props["decision"]) + js(props["note"]) + js(fields["required"]); got != `{"enum":["approve","deny"],"title":"Decision","type":"string"}{"title":"Note","type":"string"}["decision"]` {
		t.Errorf("human_loop_1's fields = %s", js(fields))
	}
	if n := len(v.Manifest.Steps); n != 6 || !slices.ContainsFunc(v.Manifest.Steps, func(s definition.Step) bool { return s.Ref == "transform_1" }) {
		t.Errorf("%d steps published", n)
	}
}
