package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/goccy/go-yaml"

	"github.com/ductor/ductor/app/definition"
)

// editorShapesDoc has each of the settings edited by the list and value
// sub-forms: an http step's body (a value of each kind), one expected
// status and its concurrency, an event_set's members (one with its key
// written first), and a scatter's counts and http template with a list
// of statuses and a concurrency whose limit is an expression.
const editorShapesDoc = `key: shapes
steps:
  - ref: hook
    type: http
    with:
      url: https://example.com/hook
      method: POST
      body: {order: A-1, qty: 3, rush: true, note: null, tags: [a, b], meta: {src: ui}}
      expect_status: 201
    concurrency: {key_expr: input.vendor, limit: 2}
  - ref: legs
    type: event_set
    with:
      events:
        - {name: paid, match_expr: event.order == input.order}
        - {key: shipped_1, name: shipped}
      policy: all_required
  - ref: fan
    type: scatter
    with:
      items_expr: input.items
      concurrency: 2
      interval_ms: 50
      do:
        type: http
        with: {url: https://example.com/item, expect_status: [200, 202], body: {id: 1}}
        concurrency: {key_expr: item, limit: 'input.tier == "gold" ? 4 : 1'}
edges:
  - {from: hook, to: legs}
  - {from: legs, to: fan}
`

// touchSubForms sends each input of the panel's row and concurrency
// sub-forms an input and a change event, as an edit that changes no
// text would, then shows each sub-form's JSON, touches it alike and goes
// back to the form.
func touchSubForms(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, "touch the sub-forms", chromedp.Evaluate[chromedp.Void](`(() => {
		document.querySelector("#panel details.step-settings").open = true;
		const fire = (el) => { el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); };
		document.querySelectorAll("#panel :is(.rows-form, .flow-form) :is(input, select, textarea)").forEach(fire);
	})()`))
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#panel :is(.rows-form, .flow-form)")].map((b) => b.id)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		run(t, ctx, "show "+id+" as JSON", chromedp.Click(chromedp.CSS("#"+id+"-json")))
		waitFor(t, ctx, "the JSON of "+id, fmt.Sprintf(`document.querySelector("textarea#%s")?.dataset.kind === "json"`, id))
		run(t, ctx, "touch it", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const a = document.querySelector("textarea#%s");
			a.dispatchEvent(new Event("input", {bubbles: true})); a.dispatchEvent(new Event("change", {bubbles: true})); })()`, id)))
		run(t, ctx, "back to the form", chromedp.Click(chromedp.CSS("#"+id+"-json")))
		waitFor(t, ctx, "the form of "+id, fmt.Sprintf(`!!document.querySelector("#%s[data-sub]")`, id))
	}
}

// rowOf is the 1-based place of the row of box whose col input reads v.
func rowOf(t *testing.T, ctx context.Context, box, col, v string) int {
	t.Helper()
	return int(jsNum(ctx, t, fmt.Sprintf(`[...document.querySelectorAll("%s .rows > .row")].findIndex((r) => r.querySelector("[data-col=%s]").value === %q) + 1`, box, col, v)))
}

// shootPanel takes shoot's screenshots with the side panel drawn whole
// rather than scrolled (shoot's resizing scrolls it back to its top), so
// that the sub-form of the field css shows in them: the editor's grid
// grows to the panel's height for the while.
func shootPanel(t *testing.T, ctx context.Context, name, css string) {
	t.Helper()
	const set = `(on) => {
		const style = (sel, k, v) => { document.querySelector(sel).style[k] = on ? v : ""; };
		style(".editor-grid", "height", "auto");
		style(".editor-side", "gridTemplateRows", "auto auto");
		style("#panel", "overflow", "visible");
	}`
	if count(t, ctx, css) != 1 {
		t.Fatalf("no %s to show", css)
	}
	run(t, ctx, "draw the panel whole", chromedp.Evaluate[chromedp.Void](`(`+set+`)(true)`))
	shoot(t, ctx, name)
	run(t, ctx, "scroll the panel again", chromedp.Evaluate[chromedp.Void](`(`+set+`)(false)`))
}

func rowCSS(box string, n int, col string) string {
	return fmt.Sprintf("%s .rows > .row:nth-child(%d) [data-col=%s]", box, n, col)
}

// publishedSource publishes the editor's document and answers the stored
// version's source as JSON, after checking it compiles to the stored
// manifest.
func publishedSource(t *testing.T, ctx context.Context, p *program, key string) map[string]any {
	t.Helper()
	run(t, ctx, "publish", chromedp.Click(chromedp.CSS("#publish")), chromedp.WaitVisible(chromedp.CSS("#notice[data-version]")))
	code, body := get(t, p.BaseURL+"/api/v1/definitions/"+key+"/versions/1", p.devKey(t))
	var v struct {
		ManifestHash string `json:"manifest_hash"`
		Source       string `json:"source"`
	}
	if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil {
		t.Fatalf("GET the version = %d %s", code, body)
	}
	if c, err := definition.Compile([]byte(v.Source), definition.FormatAuto); err != nil || c.Hash != v.ManifestHash {
		t.Fatalf("the published source compiles to %v (%v), want hash %s", c, err, v.ManifestHash)
	}
	raw, err := yaml.YAMLToJSON([]byte(v.Source))
	if err != nil {
		t.Fatalf("the source: %v\n%s", err, v.Source)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// sourceStep is a step of a published source, by ref.
func sourceStep(t *testing.T, doc map[string]any, ref string) map[string]any {
	t.Helper()
	for _, s := range doc["steps"].([]any) {
		if m := s.(map[string]any); m["ref"] == ref {
			return m
		}
	}
	t.Fatalf("no step %s in %v", ref, doc)
	return nil
}

func jsText(x any) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// The settings that were JSON text — an event_set's events, an http
// step's body and expect_status, a task's or http step's concurrency,
// and those of a scatter's http template — are sub-forms: opening each,
// reading it back unedited and going to its JSON and back changes
// nothing in the document; edited row by row, the published source holds
// what the rows say.
func TestEditorListAndValueSubFormsRoundTrip(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "shapes")
	setYAML(t, ctx, editorShapesDoc)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	undo := attrOf(t, ctx, "#editor", "data-undo")
	yamlText := value(t, ctx, "#yaml")

	forms := map[string][]string{
		"hook": {`#f-with-body[data-sub=body]`, `#f-with-expect_status[data-sub=statuses]`, `#f-concurrency[data-sub=flow]`},
		"legs": {`#f-with-events[data-sub=events]`},
		"fan": {`#f-with-do-with-body[data-sub=body]`, `#f-with-do-with-expect_status[data-sub=statuses]`, `#f-with-do-concurrency[data-sub=flow]`,
			`input#f-with-concurrency[type=number]`, `input#f-with-interval_ms[type=number]`},
	}
	for _, ref := range []string{"hook", "legs", "fan"} {
		selectStep(t, ctx, ref)
		for _, css := range forms[ref] {
			if count(t, ctx, css) != 1 {
				t.Errorf("%s: no %s", ref, css)
			}
		}
		if n := count(t, ctx, `#panel textarea[data-kind=json]`); n != 0 {
			t.Errorf("%s: %d settings still JSON text", ref, n)
		}
		touchSubForms(t, ctx)
		if got := attrOf(t, ctx, "#editor", "data-undo"); got != undo || value(t, ctx, "#yaml") != yamlText {
			t.Fatalf("%s: reading its sub-forms back changed the document (undo steps %s, were %s):\n%s", ref, got, undo, value(t, ctx, "#yaml"))
		}
	}
	// What the rows show: each body value with its type, the one status,
	// the member whose key was written first, the expression limit.
	selectStep(t, ctx, "hook")
	if got := fmt.Sprint(jsText(value(t, ctx, rowCSS("#f-with-body", rowOf(t, ctx, "#f-with-body", "key", "tags"), "value"))),
		value(t, ctx, rowCSS("#f-with-body", rowOf(t, ctx, "#f-with-body", "key", "rush"), "type")),
		value(t, ctx, rowCSS("#f-with-expect_status", 1, "status"))); got != `"[\"a\",\"b\"]"boolean201` {
		t.Errorf("the hook's rows read %s", got)
	}
	editHook(t, ctx)
	shootPanel(t, ctx, "editor-forms-http", `[data-field="with.body"]`)
	axeClean(t, ctx)

	selectStep(t, ctx, "legs")
	if got := value(t, ctx, rowCSS("#f-with-events", rowOf(t, ctx, "#f-with-events", "name", "shipped"), "key")); got != "shipped_1" {
		t.Errorf("the shipped member's key reads %q", got)
	}
	run(t, ctx, "add an event", chromedp.Click(chromedp.CSS("#f-with-events-add")))
	run(t, ctx, "name it", chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-events", 3, "name")), "refunded"),
		chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-events", 3, "match_expr")), "event.amount > 0"))
	run(t, ctx, "remove paid", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#f-with-events .rows > .row:nth-child(%d) [data-row=remove]`, rowOf(t, ctx, "#f-with-events", "name", "paid")))))
	waitFor(t, ctx, "two members left", `document.querySelectorAll("#f-with-events .rows > .row").length === 2`)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	shootPanel(t, ctx, "editor-forms-events", `[data-field="with.events"]`)
	axeClean(t, ctx)

	selectStep(t, ctx, "fan")
	if got := value(t, ctx, "#f-with-do-concurrency-limit-kind") + " " + value(t, ctx, "#f-with-do-concurrency-limit"); got != `expr input.tier == "gold" ? 4 : 1` {
		t.Errorf("the template's limit reads %q", got)
	}
	choose(t, ctx, "#f-with-do-concurrency-limit-kind", "number")
	typeInto(t, ctx, "#f-with-do-concurrency-limit", "4")
	run(t, ctx, "drop 202", chromedp.Click(chromedp.CSS(`#f-with-do-with-expect_status .rows > .row:nth-child(2) [data-row=remove]`)))
	typeInto(t, ctx, "#f-with-concurrency", "3")
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	shootPanel(t, ctx, "editor-forms-scatter-http", `[data-field="with.do.with.body"]`)
	axeClean(t, ctx)

	doc := publishedSource(t, ctx, p, "shapes")
	hook := sourceStep(t, doc, "hook")
	with := hook["with"].(map[string]any)
	if got := jsText(with["body"]); got != `{"meta":{"src":"ui"},"note":"urgent","order":"A-1","priority":5,"qty":4,"rush":true,"tags":["a","b"]}` {
		t.Errorf("hook's body = %s", got)
	}
	if got := jsText(with["expect_status"]) + jsText(hook["concurrency"]); got != `[201,202]{"key_expr":"input.vendor","limit":3}` {
		t.Errorf("hook's expect_status and concurrency = %s", got)
	}
	if got := jsText(sourceStep(t, doc, "legs")["with"].(map[string]any)["events"]); got != `[{"key":"shipped_1","name":"shipped"},{"match_expr":"event.amount \u003e 0","name":"refunded"}]` {
		t.Errorf("legs' events = %s", got)
	}
	fan := sourceStep(t, doc, "fan")["with"].(map[string]any)
	do := fan["do"].(map[string]any)
	if got := jsText(fan["concurrency"]) + jsText(fan["interval_ms"]) + jsText(do["concurrency"]) + jsText(do["with"].(map[string]any)["expect_status"]); got != `350{"key_expr":"item","limit":4}[200]` {
		t.Errorf("fan = %s", jsText(fan))
	}
}

// editHook edits the http step through its rows: a body value changed,
// a value's type changed, a key added; a status added; the concurrency's
// limit.
func editHook(t *testing.T, ctx context.Context) {
	t.Helper()
	typeInto(t, ctx, rowCSS("#f-with-body", rowOf(t, ctx, "#f-with-body", "key", "qty"), "value"), "4")
	note := rowOf(t, ctx, "#f-with-body", "key", "note")
	choose(t, ctx, rowCSS("#f-with-body", note, "type"), "text")
	typeInto(t, ctx, rowCSS("#f-with-body", note, "value"), "urgent")
	run(t, ctx, "add a key", chromedp.Click(chromedp.CSS("#f-with-body-add")))
	last := count(t, ctx, "#f-with-body .rows > .row")
	run(t, ctx, "name it", chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-body", last, "key")), "priority"))
	choose(t, ctx, rowCSS("#f-with-body", last, "type"), "number")
	typeInto(t, ctx, rowCSS("#f-with-body", last, "value"), "5")
	run(t, ctx, "add a status", chromedp.Click(chromedp.CSS("#f-with-expect_status-add")))
	typeInto(t, ctx, rowCSS("#f-with-expect_status", 2, "status"), "202")
	run(t, ctx, "open the step settings", chromedp.Evaluate[chromedp.Void](`document.querySelector("#panel details.step-settings").open = true`))
	typeInto(t, ctx, "#f-concurrency-limit", "3")
	waitFor(t, ctx, "the edits in the YAML", `(() => { const y = document.getElementById("yaml").value;
		return y.includes("priority: 5") && y.includes("urgent") && y.includes("202") && y.includes("limit: 3"); })()`)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
}

// addBodyKey adds a key to an http body sub-form: its name, its type
// and, but for a boolean or null, its value.
func addBodyKey(t *testing.T, ctx context.Context, box, key, typ, v string) {
	t.Helper()
	run(t, ctx, "add a body key", chromedp.Click(chromedp.CSS(box+"-add")))
	n := count(t, ctx, box+" .rows > .row")
	run(t, ctx, "name it "+key, chromedp.SendKeys(chromedp.CSS(rowCSS(box, n, "key")), key))
	choose(t, ctx, rowCSS(box, n, "type"), typ)
	if typ == "boolean" {
		choose(t, ctx, rowCSS(box, n, "value"), v)
	} else if v != "" {
		typeInto(t, ctx, rowCSS(box, n, "value"), v)
	}
}

// A six-step workflow built from an empty editor with no JSON typed: a
// scatter whose http template has its statuses and concurrency set by
// sub-forms, an approval whose approver is picked, a human_loop whose
// case form is built row by row, an event_set whose members are rows,
// an http step whose body, headers, statuses and concurrency are rows
// and inputs, and a transform. The published source holds each.
func TestEditorBuildsEventsAndRequestsWithoutJSON(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "fulfil")
	waitFor(t, ctx, "the pickers' hints", `document.getElementById("panel").dataset.hints === "loaded"`)
	types := []string{"scatter", "approval", "human_loop", "event_set", "http", "transform"}
	for _, typ := range types {
		run(t, ctx, "add a "+typ, chromedp.Click(chromedp.CSS(`.palette-item[data-type="`+typ+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`g.node[data-ref="`+typ+`_1"]`)))
	}
	for i := 0; i+1 < len(types); i++ {
		on := map[string]string{"approval": "approved"}[types[i]]
		if on == "" {
			on = "success"
		}
		connectByForm(t, ctx, types[i]+"_1", on, types[i+1]+"_1")
	}

	// The scatter: an http template, one status, a concurrency per item.
	selectStep(t, ctx, "scatter_1")
	typeInto(t, ctx, "#f-with-concurrency", "5")
	choose(t, ctx, "#f-with-do-type", "http")
	waitFor(t, ctx, "the http template's fields", `!!document.querySelector("#f-with-do-with-url") && !!document.querySelector("#f-with-do-concurrency[data-sub=flow]")`)
	typeInto(t, ctx, "#f-with-do-with-url", "https://example.com/items")
	run(t, ctx, "add a status", chromedp.Click(chromedp.CSS("#f-with-do-with-expect_status-add")))
	typeInto(t, ctx, rowCSS("#f-with-do-with-expect_status", 1, "status"), "200")
	typeInto(t, ctx, "#f-with-do-concurrency-key_expr", "item")
	typeInto(t, ctx, "#f-with-do-concurrency-limit", "2")

	// The approval: a member picked beside role:admin.
	selectStep(t, ctx, "approval_1")
	typeInto(t, ctx, "#f-with-title", "Ship the order?")
	typeInto(t, ctx, "#f-with-approvers-add", "dev@")
	waitFor(t, ctx, "the member offered", `!!document.querySelector('#f-with-approvers-add-list li[data-value="dev@localhost"][aria-selected="true"]')`)
	pressEnter(t, ctx)

	// The case form: one required choice.
	selectStep(t, ctx, "human_loop_1")
	run(t, ctx, "add a case field", chromedp.Click(chromedp.CSS("#f-with-fields-add")))
	run(t, ctx, "name it", chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-fields", 1, "name")), "decision"))
	choose(t, ctx, rowCSS("#f-with-fields", 1, "type"), "enum")
	run(t, ctx, "its options, required", chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-fields", 1, "options")), "ship, hold", chromedp.NodeVisible),
		chromedp.Click(chromedp.CSS(rowCSS("#f-with-fields", 1, "required"))))

	// The event set: the sample's members renamed, one removed, one added.
	selectStep(t, ctx, "event_set_1")
	typeInto(t, ctx, rowCSS("#f-with-events", 1, "name"), "paid")
	typeInto(t, ctx, rowCSS("#f-with-events", 1, "match_expr"), "event.order == input.order")
	run(t, ctx, "remove b", chromedp.Click(chromedp.CSS(`#f-with-events .rows > .row:nth-child(2) [data-row=remove]`)))
	run(t, ctx, "add an event", chromedp.Click(chromedp.CSS("#f-with-events-add")))
	run(t, ctx, "name it", chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-events", 2, "name")), "shipped"),
		chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-events", 2, "key")), "ship"))

	// The request: its body, a header, two statuses and a concurrency.
	selectStep(t, ctx, "http_1")
	typeInto(t, ctx, "#f-with-url", "https://example.com/orders")
	choose(t, ctx, "#f-with-method", "POST")
	addBodyKey(t, ctx, "#f-with-body", "order", "text", "A-1")
	addBodyKey(t, ctx, "#f-with-body", "qty", "number", "3")
	addBodyKey(t, ctx, "#f-with-body", "rush", "boolean", "false")
	run(t, ctx, "add a header", chromedp.Click(chromedp.CSS("#f-with-headers-add")))
	run(t, ctx, "name it", chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-headers", 1, "key")), "X-Source"),
		chromedp.SendKeys(chromedp.CSS(rowCSS("#f-with-headers", 1, "value")), "ductor"))
	for i, code := range []string{"201", "202"} {
		run(t, ctx, "add a status", chromedp.Click(chromedp.CSS("#f-with-expect_status-add")))
		typeInto(t, ctx, rowCSS("#f-with-expect_status", i+1, "status"), code)
	}
	run(t, ctx, "open the step settings", chromedp.Evaluate[chromedp.Void](`document.querySelector("#panel details.step-settings").open = true`))
	typeInto(t, ctx, "#f-concurrency-key_expr", "input.vendor")
	typeInto(t, ctx, "#f-concurrency-limit", "2")
	waitFor(t, ctx, "the request in the YAML", `(() => { const y = document.getElementById("yaml").value;
		return y.includes("X-Source: ductor") && y.includes("key_expr: input.vendor") && y.includes("rush: false"); })()`)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	if n := count(t, ctx, `#panel textarea[data-kind=json]`); n != 0 {
		t.Errorf("%d settings of the http step are JSON text", n)
	}
	shootPanel(t, ctx, "editor-forms-build", `[data-field="with.body"]`)
	axeClean(t, ctx)

	doc := publishedSource(t, ctx, p, "fulfil")
	with := func(ref string) map[string]any { return sourceStep(t, doc, ref)["with"].(map[string]any) }
	if got := jsText(with("scatter_1")); got != `{"concurrency":5,"do":{"concurrency":{"key_expr":"item","limit":2},"type":"http","with":{"expect_status":[200],"url":"https://example.com/items"}},"items_expr":"[1, 2, 3]"}` {
		t.Errorf("scatter_1 = %s", got)
	}
	if got := jsText(with("approval_1")); got != `{"approvers":["role:admin","dev@localhost"],"title":"Ship the order?"}` {
		t.Errorf("approval_1 = %s", got)
	}
	if got := jsText(with("human_loop_1")["fields"]); got != `{"properties":{"decision":{"enum":["ship","hold"],"type":"string"}},"required":["decision"],"type":"object"}` {
		t.Errorf("human_loop_1's fields = %s", got)
	}
	if got := jsText(with("event_set_1")["events"]); got != `[{"match_expr":"event.order == input.order","name":"paid"},{"key":"ship","name":"shipped"}]` {
		t.Errorf("event_set_1's events = %s", got)
	}
	http1 := sourceStep(t, doc, "http_1")
	if got := jsText(http1["with"]) + jsText(http1["concurrency"]); got != `{"body":{"order":"A-1","qty":3,"rush":false},"expect_status":[201,202],"headers":{"X-Source":"ductor"},"method":"POST","url":"https://example.com/orders"}`+
		`{"key_expr":"input.vendor","limit":2}` {
		t.Errorf("http_1 = %s", got)
	}
	if n := len(doc["steps"].([]any)); n != 6 {
		t.Errorf("%d steps published", n)
	}
}
