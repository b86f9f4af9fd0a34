package views

import "github.com/ductor/ductor/app/definition"

// Field kinds the editor's side panel knows how to edit.
const (
	FieldText     = "text"     // a literal string
	FieldExpr     = "expr"     // a CEL expression: monospace, highlighted
	FieldDuration = "duration" // Go (90s, 1h30m) or ISO-8601 (PT90S)
	FieldEnum     = "enum"     // one of Options
	FieldInt      = "int"      // a whole number
	FieldTime     = "time"     // an RFC 3339 time
	FieldList     = "list"     // strings, one per line
	FieldJSON     = "json"     // any JSON value, edited as JSON text
	FieldJoin     = "join"     // all, any or {at_least: N, cancel_rest}
	FieldNumber   = "number"   // a number
	FieldBool     = "bool"     // true or false, or unset for the default
	// Sub-forms, each with its JSON one toggle away.
	FieldTemplate = "template" // a scatter's `do`: a type and that type's fields
	FieldSchema   = "schema"   // a human_loop's case fields: a JSON Schema of rows
	FieldHeaders  = "headers"  // an object of strings: name and value rows
	FieldEvents   = "events"   // an event_set's members: name, key and match_expr rows
	FieldStatuses = "statuses" // a status code or a list of them: a row per code
	FieldBody     = "body"     // a JSON object: key and typed value rows
	FieldFlow     = "flow"     // a step's concurrency: key_expr and limit (a number or an expression)
	FieldAuth     = "auth"     // an http step's auth: bearer, or basic's user and password, each a secret's name
	FieldStrings  = "strings"  // a list of strings: a row per string
	// The workflow settings' sub-forms.
	FieldRules    = "rules"    // a definition's concurrency: key_expr, limit and strategy rows
	FieldDebounce = "debounce" // key_expr, period and max_wait
	FieldRate     = "rate"     // a throttle or rate limit: key_expr, limit and period
	FieldTriggers = "triggers" // event and schedule rows
)

// Pickers: what a field offers to choose from, besides free text.
const (
	PickHandler  = "handler"  // built-in handlers and those the tenant's workers ran
	PickPeople   = "people"   // the tenant's members by email, and role:NAME
	PickScatter  = "scatter"  // the step's ancestor scatters in the graph
	PickWorkflow = "workflow" // the tenant's definitions
	PickVersion  = "version"  // the published versions of the step's workflow
)

// TemplateTypes are the types a scatter's `do` template may have.
var TemplateTypes = []string{"task", "http", "transform"}

// StepField is one setting of a step: Name is its key in `with` (or, for
// Common fields, in the step itself, dotted for retry.*).
type StepField struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Required bool     `json:"required,omitempty"`
	OneOf    string   `json:"one_of,omitempty"` // fields sharing a OneOf label: exactly one is required
	Options  []string `json:"options,omitempty"`
	Default  string   `json:"default,omitempty"`
	Help     string   `json:"help,omitempty"`
	Picker   string   `json:"picker,omitempty"` // one of the Pick constants
	// Mode is the value of its kind's ModeField the field applies in (""
	// in every mode), as the compiler has it.
	Mode string `json:"mode,omitempty"`
}

// StepKind describes one of the fifteen step types for the editor: its
// palette entry, its outcomes, the settings in its box and its fields.
type StepKind struct {
	Type     string      `json:"type"`
	Label    string      `json:"label"`
	Icon     string      `json:"icon"`
	Outcomes []string    `json:"outcomes"`
	Key      []string    `json:"key"` // `with` fields shown in the box, first present wins
	Fields   []StepField `json:"fields"`
	// Retry: the type takes retry and a per-attempt timeout; ForEach: it
	// takes for_each.
	Retry   bool `json:"retry,omitempty"`
	ForEach bool `json:"for_each,omitempty"`
	// Sample is a `with` that compiles, used when the step is added.
	Sample map[string]any `json:"sample"`
	// ModeField names the enum field whose value decides which of the
	// fields with a Mode apply (a scatter's and a subworkflow's mode).
	ModeField string `json:"mode_field,omitempty"`
}

func req(name, kind string) StepField { return StepField{Name: name, Kind: kind, Required: true} }
func opt(name, kind string) StepField { return StepField{Name: name, Kind: kind} }
func enum(name, def string, options ...string) StepField {
	return StepField{Name: name, Kind: FieldEnum, Default: def, Options: options}
}
func oneOf(group, name, kind string) StepField {
	return StepField{Name: name, Kind: kind, OneOf: group}
}
func pick(f StepField, picker string) StepField {
	f.Picker = picker
	return f
}

var (
	timeoutField = opt("timeout", FieldDuration)
	outcomesWork = []string{"success", "error"}
)

// StepKinds lists the fifteen step types in palette order, with the
// `with` settings the compiler accepts (app/definition/doc.go).
var StepKinds = []StepKind{
	{Type: "task", Label: "Task", Icon: "⚙", Outcomes: outcomesWork, Key: []string{"handler"}, Retry: true, ForEach: true,
		Fields: []StepField{pick(req("handler", FieldText), PickHandler), opt("queue", FieldText), opt("input_expr", FieldExpr),
			help(opt("secrets", FieldStrings), "tenant secrets the handler receives beside its input, by name"), opt("schedule_to_start", FieldDuration)},
		Sample: map[string]any{"handler": "builtin.noop"}},
	{Type: "http", Label: "HTTP request", Icon: "⇄", Outcomes: outcomesWork, Key: []string{"url", "url_expr"}, Retry: true, ForEach: true,
		Fields: []StepField{oneOf("url", "url", FieldText), oneOf("url", "url_expr", FieldExpr),
			enum("method", "GET", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"),
			opt("headers", FieldHeaders), help(opt("headers_expr", FieldExpr), `instead of headers: a map computed, may use secret("NAME")`),
			help(opt("auth", FieldAuth), "sends a tenant secret as the Authorization header"), opt("body", FieldBody), opt("body_expr", FieldExpr), opt("expect_status", FieldStatuses)},
		Sample: map[string]any{"url": "https://example.com/"}},
	{Type: "transform", Label: "Transform", Icon: "ƒ", Outcomes: outcomesWork, Key: []string{"expr"}, ForEach: true,
		Fields: []StepField{req("expr", FieldExpr)}, Sample: map[string]any{"expr": "input"}},
	{Type: "condition", Label: "Condition", Icon: "◇", Outcomes: []string{"true", "false", "error"}, Key: []string{"expr"},
		Fields: []StepField{req("expr", FieldExpr)}, Sample: map[string]any{"expr": "true"}},
	{Type: "scatter", Label: "Scatter", Icon: "⋔", Outcomes: outcomesWork, Key: []string{"items_expr"},
		Fields: []StepField{req("items_expr", FieldExpr), opt("key_expr", FieldExpr), enum("mode", "inline", "inline", "child_workflow"),
			opt("do", FieldTemplate), pick(opt("workflow", FieldText), PickWorkflow), pick(opt("version", FieldInt), PickVersion), opt("input_expr", FieldExpr),
			opt("max_inline_children", FieldInt), opt("concurrency", FieldInt), opt("interval_ms", FieldInt),
			help(opt("complete_when", FieldExpr), "complete early once true: succeeded, failed, done, total, results")},
		Sample: map[string]any{"items_expr": "[1, 2, 3]", "do": map[string]any{"type": "transform", "with": map[string]any{"expr": "item"}}}},
	{Type: "gather", Label: "Gather", Icon: "⋈", Outcomes: outcomesWork, Key: []string{"scatter_ref"},
		Fields: []StepField{pick(req("scatter_ref", FieldText), PickScatter), enum("strategy", "partition", "partition", "include", "drop", "raise")},
		Sample: map[string]any{"scatter_ref": ""}},
	{Type: "subworkflow", Label: "Subworkflow", Icon: "▣", Outcomes: outcomesWork, Key: []string{"workflow"},
		Fields: []StepField{pick(req("workflow", FieldText), PickWorkflow), pick(opt("version", FieldInt), PickVersion), enum("mode", "sync", "sync", "async"),
			opt("wait_for", FieldText), opt("input_expr", FieldExpr), timeoutField,
			enum("on_timeout", "fail_parent", "fail_parent", "detach", "continue_with_error"),
			help(opt("repeat.until_expr", FieldExpr), "loop: one child run per iteration until true (reads output, iteration)"),
			opt("repeat.input_expr", FieldExpr), opt("repeat.max_iterations", FieldInt)},
		Sample: map[string]any{"workflow": "child"}},
	{Type: "checkpoint", Label: "Checkpoint", Icon: "⚑", Outcomes: []string{"success"}, Key: []string{"name"},
		Fields: []StepField{req("name", FieldText), opt("output_expr", FieldExpr)}, Sample: map[string]any{"name": "ready"}},
	{Type: "wait", Label: "Wait", Icon: "◔", Outcomes: []string{"success"}, Key: []string{"duration", "until", "cron", "until_expr"},
		Fields: []StepField{oneOf("when", "duration", FieldDuration), oneOf("when", "until", FieldTime),
			oneOf("when", "cron", FieldText), opt("timezone", FieldText), oneOf("when", "until_expr", FieldExpr)},
		Sample: map[string]any{"duration": "1m"}},
	{Type: "signal", Label: "Signal", Icon: "⚡", Outcomes: outcomesWork, Key: []string{"name"},
		Fields: []StepField{req("name", FieldText), timeoutField, enum("on_timeout", "fail", "fail", "skip")},
		Sample: map[string]any{"name": "go"}},
	{Type: "event", Label: "Event", Icon: "✉", Outcomes: outcomesWork, Key: []string{"name"},
		Fields: []StepField{req("name", FieldText), opt("match_expr", FieldExpr), timeoutField, enum("on_timeout", "fail", "fail", "skip")},
		Sample: map[string]any{"name": "order.paid"}},
	{Type: "event_set", Label: "Event set", Icon: "◎", Outcomes: outcomesWork, Key: []string{"policy"},
		Fields: []StepField{req("events", FieldEvents), enum("policy", "all_required", "all_required", "any", "quorum", "count", "until_timeout"),
			opt("n", FieldInt), timeoutField, enum("on_timeout", "fail", "fail", "succeed_partial")},
		Sample: map[string]any{"events": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}}},
	{Type: "digest", Label: "Digest", Icon: "▤", Outcomes: []string{"success"}, Key: []string{"name", "window"},
		Fields: []StepField{req("name", FieldText), opt("match_expr", FieldExpr), req("window", FieldDuration), opt("max_items", FieldInt)},
		Sample: map[string]any{"name": "alerts", "window": "5m"}},
	{Type: "approval", Label: "Approval", Icon: "✔", Outcomes: []string{"approved", "rejected", "error"}, Key: []string{"title", "approvers"},
		Fields: []StepField{pick(req("approvers", FieldList), PickPeople), opt("title", FieldText), opt("description", FieldText),
			opt("min_approvals", FieldInt), timeoutField, enum("on_timeout", "fail", "fail", "approve", "skip")},
		Sample: map[string]any{"approvers": []any{"role:admin"}}},
	{Type: "human_loop", Label: "Human loop", Icon: "☺", Outcomes: outcomesWork, Key: []string{"title"},
		Fields: []StepField{req("title", FieldText), pick(opt("assignees", FieldList), PickPeople), opt("fields", FieldSchema),
			opt("awaiting_status", FieldText), timeoutField, enum("on_timeout", "fail", "fail", "skip")},
		Sample: map[string]any{"title": "Review"}},
}

// CommonFields are the step-level settings every type has; Retry types
// also take RetryFields.
var CommonFields = []StepField{
	opt("name", FieldText), opt("run_if", FieldExpr),
	{Name: "join", Kind: FieldJoin, Default: "all", Options: []string{"all", "any", "at_least"},
		Help: "at_least: ready once N incoming edges fired; cancel the rest to race them"},
	enum("on_error", "fail", "fail", "continue"),
	help(enum("end_run", "none", "succeeded", "failed"), "end the whole run with this status once the step succeeds"),
}

func help(f StepField, text string) StepField {
	f.Help = text
	return f
}

// ForEachField is for_each, on types with ForEach.
var ForEachField = opt("for_each", FieldExpr)

// RetryFields are the attempt settings of types with Retry.
var RetryFields = []StepField{
	opt("timeout", FieldDuration),
	opt("retry.max_attempts", FieldInt), opt("retry.initial_interval", FieldDuration),
	opt("retry.backoff_coefficient", FieldNumber), opt("retry.max_interval", FieldDuration),
	{Name: "retry.jitter", Kind: FieldBool, Default: "true", Help: "spread each wait randomly over its second half"},
	help(opt("concurrency", FieldFlow), "attempts at once for key_expr's key, across the tenant's steps naming it"),
}

// WorkflowFields are the definition-wide settings the workflow settings
// panel edits, keyed as in the document (dotted for limits.*).
var WorkflowFields = []StepField{
	opt("name", FieldText), opt("description", FieldText),
	help(opt("timeout", FieldDuration), "how long the whole run may take; past it the run ends timed_out"),
	help(opt("output_expr", FieldExpr), "the run's output; default: a map of the sink steps' outputs by ref"),
	help(opt("input_schema", FieldSchema), "every trigger input must match it; a run whose input does not is refused"),
	help(opt("concurrency", FieldRules), "runs at once per key; a run starts once every rule has a slot for it"),
	help(opt("debounce", FieldDebounce), "a burst of starts of a key makes one run, with the last input, once the key is quiet"),
	help(opt("throttle", FieldRate), "at most limit starts of a key per period; the others wait their turn"),
	help(opt("rate_limit", FieldRate), "at most limit starts of a key per period; the others are refused (429)"),
	help(opt("triggers", FieldTriggers), "what starts runs without a caller: events, and schedules publishing creates"),
	opt("limits.max_inline_children", FieldInt), opt("limits.transitions_soft", FieldInt),
	opt("limits.transitions_hard", FieldInt), opt("limits.transitions_terminate", FieldInt),
}

// The fields' modes come from the compiler: a field the compiler accepts
// only in one mode of its step shows only in that mode.
func init() {
	for i := range StepKinds {
		k := &StepKinds[i]
		spec, ok := definition.WithSpecOf(definition.StepType(k.Type))
		if !ok {
			continue
		}
		k.ModeField = spec.ModeField
		for j := range k.Fields {
			if f, ok := spec.Field(k.Fields[j].Name); ok {
				k.Fields[j].Mode = f.Mode
			}
		}
	}
}
