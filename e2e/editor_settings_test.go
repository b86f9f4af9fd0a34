package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// editorSettingsDoc has every definition-wide setting: a name, a
// description, a timeout, an output, an input schema, two concurrency
// rules (one keyed, one whose limit is an expression), a debounce, a
// throttle, a rate limit, an event trigger and a schedule, and limits;
// and a task's secrets and an http step's auth and computed headers.
const editorSettingsDoc = `key: settings
name: Order settings
description: Every definition-wide setting
timeout: 2h
output_expr: steps.work.output
input_schema:
  type: object
  properties:
    customer: {type: string, title: Customer}
    tier: {type: string, enum: [gold, silver]}
  required: [customer]
concurrency:
  - {key_expr: input.customer, limit: 2, strategy: cancel_newest}
  - {limit: 'input.tier == "gold" ? 10 : 5'}
debounce: {key_expr: input.customer, period: 30s, max_wait: 5m}
throttle: {key_expr: input.customer, limit: 10, period: 1m}
rate_limit: {limit: 100, period: 1h}
triggers:
  - {event: order.placed, filter_expr: event.amount > 0, input_expr: event}
  - schedule: {id: nightly, cron: 0 2 * * *, timezone: UTC, input: {customer: batch}}
limits: {max_inline_children: 50, transitions_soft: 5000}
steps:
  - ref: work
    type: task
    with: {handler: builtin.echo, secrets: [API_TOKEN]}
  - ref: call
    type: http
    with:
      url: https://example.com/x
      auth: {bearer: API_TOKEN}
      headers_expr: '{"X-Key": secret("API_KEY")}'
edges:
  - {from: work, to: call}
`

// openSettings opens the workflow settings from the toolbar's button
// with the keyboard and waits for the panel, the focus on its title.
func openSettings(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, "press the settings button", chromedp.Focus(chromedp.CSS("#workflow-settings")), chromedp.KeyEvent("\r"))
	waitFor(t, ctx, "the workflow settings", `document.activeElement?.id === "panel-title" && !!document.querySelector("#w-concurrency")`)
}

// touchSettings sends every input of the panel an input and a change
// event, as an edit that changes no text would; then shows each
// sub-form's JSON, touches it alike and goes back to the form.
func touchSettings(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, "touch every input", chromedp.Evaluate[chromedp.Void](`(() => {
		for (const d of document.querySelectorAll("#panel details")) d.open = true;
		const fire = (el) => { el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); };
		document.querySelectorAll("#panel :is(input, select, textarea)").forEach(fire);
	})()`))
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#panel [data-sub]")].map((b) => b.id)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		t.Fatal("no sub-forms to touch")
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

// unchanged fails unless the document and the undo history are as they
// were.
func unchanged(t *testing.T, ctx context.Context, what, undo, yamlText string) {
	t.Helper()
	if got := attrOf(t, ctx, "#editor", "data-undo"); got != undo || value(t, ctx, "#yaml") != yamlText {
		t.Fatalf("%s changed the document (undo steps %s, were %s):\n%s", what, got, undo, value(t, ctx, "#yaml"))
	}
}

// The workflow settings panel, opened from the toolbar, shows every
// definition-wide setting as typed inputs and sub-forms: read back
// unedited (and through each sub-form's JSON) it changes nothing and adds
// no undo step; edited through the forms with no JSON typed, the
// published version's source and manifest hold what they say. The step
// panel has a task's secrets and an http step's auth and headers_expr.
func TestEditorSettingsPanel(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	ctx := newBrowser(t)
	devLogin(t, ctx, p)
	createDefinition(t, ctx, p, "settings")
	setYAML(t, ctx, editorSettingsDoc)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	undo := attrOf(t, ctx, "#editor", "data-undo")
	yamlText := value(t, ctx, "#yaml")

	openSettings(t, ctx)
	for _, css := range []string{`#w-concurrency[data-sub=rules]`, `#w-debounce[data-sub=debounce]`, `#w-throttle[data-sub=rate]`,
		`#w-rate_limit[data-sub=rate]`, `#w-triggers[data-sub=triggers]`, `#w-input_schema[data-sub=schema]`,
		`input#w-limits-max_inline_children[type=number]`, `input#w-timeout`, `textarea#w-output_expr`} {
		if count(t, ctx, css) != 1 {
			t.Errorf("no %s", css)
		}
	}
	if n := count(t, ctx, `#panel textarea[data-kind=json]`); n != 0 {
		t.Errorf("%d settings are JSON text", n)
	}
	rule := func(n int, c string) string { return value(t, ctx, rowCSS("#w-concurrency", n, c)) }
	trig := func(n int, c string) string { return value(t, ctx, rowCSS("#w-triggers", n, c)) }
	reads := map[string][2]string{
		"name":              {value(t, ctx, "#w-name"), "Order settings"},
		"the panel's label": {attrOf(t, ctx, "#panel", "aria-label"), "Workflow settings"},
		"timeout":           {value(t, ctx, "#w-timeout"), "2h"},
		"output_expr":       {value(t, ctx, "#w-output_expr"), "steps.work.output"},
		"rule 1":            {rule(1, "key_expr") + " " + rule(1, "limit_kind") + " " + rule(1, "limit") + " " + rule(1, "strategy"), "input.customer number 2 cancel_newest"},
		"rule 2":            {rule(2, "key_expr") + "|" + rule(2, "limit_kind") + " " + rule(2, "limit") + "|" + rule(2, "strategy"), `|expr input.tier == "gold" ? 10 : 5|`},
		"debounce":          {value(t, ctx, "#w-debounce-key_expr") + " " + value(t, ctx, "#w-debounce-period") + " " + value(t, ctx, "#w-debounce-max_wait"), "input.customer 30s 5m"},
		"throttle":          {value(t, ctx, "#w-throttle-key_expr") + " " + value(t, ctx, "#w-throttle-limit") + " " + value(t, ctx, "#w-throttle-period"), "input.customer 10 1m"},
		"rate_limit":        {value(t, ctx, "#w-rate_limit-key_expr") + "|" + value(t, ctx, "#w-rate_limit-limit") + " " + value(t, ctx, "#w-rate_limit-period"), "|100 1h"},
		"event trigger":     {trig(1, "event") + " " + trig(1, "filter_expr") + " " + trig(1, "input_expr"), "order.placed event.amount > 0 event"},
		"schedule":          {trig(2, "id") + " " + trig(2, "cron") + " " + trig(2, "timezone"), "nightly 0 2 * * * UTC"},
		"input field":       {value(t, ctx, rowCSS("#w-input_schema", 2, "type")) + " " + value(t, ctx, rowCSS("#w-input_schema", 2, "options")), "enum gold, silver"},
		"max_inline":        {value(t, ctx, "#w-limits-max_inline_children"), "50"},
		"the JSON is there": {attrOf(t, ctx, "#w-concurrency-json", "aria-pressed"), "false"},
	}
	for what, r := range reads {
		if r[0] != r[1] {
			t.Errorf("%s reads %q, want %q", what, r[0], r[1])
		}
	}
	if count(t, ctx, "#panel details.workflow-limits[open]") != 1 {
		t.Error("the limits are folded though some are set")
	}
	// The concurrency's JSON is one toggle away, and is the rules.
	run(t, ctx, "the rules as JSON", chromedp.Click(chromedp.CSS("#w-concurrency-json")))
	var rules []map[string]any
	if err := json.Unmarshal([]byte(value(t, ctx, "textarea#w-concurrency")), &rules); err != nil || len(rules) != 2 || rules[0]["strategy"] != "cancel_newest" {
		t.Errorf("the rules' JSON reads %v (%v)", rules, err)
	}
	run(t, ctx, "back to the rows", chromedp.Click(chromedp.CSS("#w-concurrency-json")))
	waitFor(t, ctx, "the rules' rows", `!!document.querySelector("#w-concurrency[data-sub=rules]")`)

	touchSettings(t, ctx)
	unchanged(t, ctx, "reading the workflow settings back", undo, yamlText)
	shootPanel(t, ctx, "editor-settings", `[data-field="concurrency"]`)
	axeClean(t, ctx)

	// The step panel's new settings read back, and unedited change nothing.
	selectStep(t, ctx, "work")
	if got := value(t, ctx, rowCSS("#f-with-secrets", 1, "value")); got != "API_TOKEN" {
		t.Errorf("work's secret reads %q", got)
	}
	touchSubForms(t, ctx)
	selectStep(t, ctx, "call")
	if got := value(t, ctx, "#f-with-auth-scheme") + " " + value(t, ctx, "#f-with-auth-bearer") + " " + value(t, ctx, "#f-with-headers_expr"); got != `bearer API_TOKEN {"X-Key": secret("API_KEY")}` {
		t.Errorf("call's auth and headers read %q", got)
	}
	touchSubForms(t, ctx)
	unchanged(t, ctx, "reading the steps' secrets and auth back", undo, yamlText)

	// Edits, through the forms only.
	openSettings(t, ctx)
	typeInto(t, ctx, "#w-timeout", "3h")
	typeInto(t, ctx, rowCSS("#w-concurrency", 1, "limit"), "3")
	run(t, ctx, "remove the second rule", chromedp.Click(chromedp.CSS(`#w-concurrency .rows > .row:nth-child(2) [data-row=remove]`)))
	run(t, ctx, "add a rule", chromedp.Click(chromedp.CSS("#w-concurrency-add")))
	waitFor(t, ctx, "the new rule", `document.activeElement?.matches("#w-concurrency .rows > .row:nth-child(2) [data-col=key_expr]")`)
	run(t, ctx, "key it", chromedp.KeyEvent("input.region"))
	typeInto(t, ctx, rowCSS("#w-concurrency", 2, "limit"), "4")
	choose(t, ctx, rowCSS("#w-concurrency", 2, "strategy"), "cancel_in_progress")
	typeInto(t, ctx, "#w-debounce-max_wait", "10m")
	typeInto(t, ctx, "#w-throttle-limit", "20")
	typeInto(t, ctx, "#w-rate_limit-key_expr", "input.customer")
	typeInto(t, ctx, "#w-rate_limit-period", "30m")
	typeInto(t, ctx, rowCSS("#w-triggers", 1, "filter_expr"), "event.amount > 10")
	run(t, ctx, "add a schedule", chromedp.Click(chromedp.CSS("#w-triggers-add-schedule")))
	typeInto(t, ctx, rowCSS("#w-triggers", 3, "id"), "hourly")
	typeInto(t, ctx, rowCSS("#w-triggers", 3, "interval"), "1h")
	run(t, ctx, "add an input field", chromedp.Click(chromedp.CSS("#w-input_schema-add")))
	run(t, ctx, "name it", chromedp.SendKeys(chromedp.CSS(rowCSS("#w-input_schema", 3, "name")), "region"))
	typeInto(t, ctx, "#w-limits-transitions_hard", "40000")
	waitFor(t, ctx, "the edits in the YAML", `(() => { const y = document.getElementById("yaml").value;
		return y.includes("timeout: 3h") && y.includes("input.region") && y.includes("hourly") && y.includes("transitions_hard: 40000") && y.includes("region:"); })()`)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	if n := count(t, ctx, `#panel textarea[data-kind=json]`); n != 0 {
		t.Errorf("%d settings became JSON text", n)
	}
	shootPanel(t, ctx, "editor-settings-edited", `[data-field="triggers"]`)
	axeClean(t, ctx)

	selectStep(t, ctx, "work")
	run(t, ctx, "add a secret", chromedp.Click(chromedp.CSS("#f-with-secrets-add")))
	run(t, ctx, "name it", chromedp.KeyEvent("OTHER_KEY"))
	selectStep(t, ctx, "call")
	choose(t, ctx, "#f-with-auth-scheme", "basic")
	waitFor(t, ctx, "basic's inputs", `!document.querySelector("#f-with-auth-user").closest(".auth-part").hidden && document.querySelector("#f-with-auth-bearer").closest(".auth-part").hidden`)
	typeInto(t, ctx, "#f-with-auth-user", "ops")
	typeInto(t, ctx, "#f-with-auth-password", "OPS_PASSWORD")
	waitFor(t, ctx, "the steps' edits in the YAML", `(() => { const y = document.getElementById("yaml").value;
		return y.includes("OTHER_KEY") && y.includes("OPS_PASSWORD"); })()`)
	waitFor(t, ctx, "the document to compile", `document.getElementById("compile-state").textContent.startsWith("compiles")`)
	shootPanel(t, ctx, "editor-settings-http-auth", `[data-field="with.auth"]`)
	axeClean(t, ctx)

	doc := publishedSource(t, ctx, p, "settings")
	for k, want := range map[string]string{
		"timeout":     `"3h"`,
		"concurrency": `[{"key_expr":"input.customer","limit":3,"strategy":"cancel_newest"},{"key_expr":"input.region","limit":4,"strategy":"cancel_in_progress"}]`,
		"debounce":    `{"key_expr":"input.customer","max_wait":"10m","period":"30s"}`,
		"throttle":    `{"key_expr":"input.customer","limit":20,"period":"1m"}`,
		"rate_limit":  `{"key_expr":"input.customer","limit":100,"period":"30m"}`,
		"triggers": `[{"event":"order.placed","filter_expr":"event.amount \u003e 10","input_expr":"event"},` +
			`{"schedule":{"cron":"0 2 * * *","id":"nightly","input":{"customer":"batch"},"timezone":"UTC"}},{"schedule":{"id":"hourly","interval":"1h"}}]`,
		"limits": `{"max_inline_children":50,"transitions_hard":40000,"transitions_soft":5000}`,
		"input_schema": `{"properties":{"customer":{"title":"Customer","type":"string"},"region":{"type":"string"},"tier":{"enum":["gold","silver"],"type":"string"}},` +
			`"required":["customer"],"type":"object"}`,
		"name": `"Order settings"`,
	} {
		if got := jsText(doc[k]); got != want {
			t.Errorf("published %s = %s, want %s", k, got, want)
		}
	}
	if got := jsText(sourceStep(t, doc, "work")["with"].(map[string]any)["secrets"]); got != `["API_TOKEN","OTHER_KEY"]` {
		t.Errorf("work's secrets = %s", got)
	}
	call := sourceStep(t, doc, "call")["with"].(map[string]any)
	if got := jsText(call["auth"]) + " " + jsText(call["headers_expr"]); got != `{"basic":{"password":"OPS_PASSWORD","user":"ops"}} "{\"X-Key\": secret(\"API_KEY\")}"` {
		t.Errorf("call's auth and headers_expr = %s", got)
	}

	// The stored version's manifest holds the rules as the engine reads them.
	code, v := api(t, p, "GET", "/definitions/settings/versions/1", "", "")
	m, _ := v["manifest"].(map[string]any)
	if code != 200 || m == nil {
		t.Fatalf("GET the version = %d %v", code, v)
	}
	for k, want := range map[string]string{
		"timeout_ms":  `10800000`,
		"concurrency": `[{"key_expr":"input.customer","limit":3,"strategy":"cancel_newest"},{"key_expr":"input.region","limit":4,"strategy":"cancel_in_progress"}]`,
		"debounce":    `{"key_expr":"input.customer","max_wait_ms":600000,"period_ms":30000}`,
		"throttle":    `{"key_expr":"input.customer","limit":20,"period_ms":60000}`,
		"rate_limit":  `{"key_expr":"input.customer","limit":100,"period_ms":1800000}`,
	} {
		if got := jsText(m[k]); got != want {
			t.Errorf("the manifest's %s = %s, want %s", k, got, want)
		}
	}
	if tr, _ := m["triggers"].([]any); len(tr) != 3 {
		t.Errorf("the manifest's triggers = %s", jsText(m["triggers"]))
	}
}
