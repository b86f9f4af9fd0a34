package definition

import (
	"regexp"

	"github.com/ductor/ductor/app/expr"
)

// The fields of a definition document, as tables. The checker reads every
// object through its table (unknown fields, required ones, kinds, enums,
// bounds and defaults come from here), [DocumentSchema] generates the JSON
// Schema from the same tables, and the reference documentation's field
// tables are rendered from them: one source of truth.

// FieldKind is what a field holds.
type FieldKind string

// Field kinds.
const (
	KindString   FieldKind = "string"
	KindExpr     FieldKind = "expression" // a CEL expression, written as a string
	KindDuration FieldKind = "duration"   // "90s", "1h30m" or ISO-8601 "PT90S"
	KindInteger  FieldKind = "integer"
	KindNumber   FieldKind = "number"
	KindBool     FieldKind = "boolean"
	KindEnum     FieldKind = "enum"
	KindStrings  FieldKind = "strings" // a list of non-empty strings
	KindTime     FieldKind = "time"    // RFC 3339
	KindCron     FieldKind = "cron"    // five fields
	KindSchema   FieldKind = "schema"  // a JSON Schema (2020-12)
	KindHeaders  FieldKind = "headers" // an object of strings
	KindStatus   FieldKind = "status"  // an HTTP status, or a list of them
	KindAny      FieldKind = "any"     // any JSON value
	KindObject   FieldKind = "object"  // an object of Fields
	KindList     FieldKind = "list"    // a list of objects of Fields
	KindEdge     FieldKind = "outcome" // an edge's outcome
	KindJoin     FieldKind = "join"    // an enum, or a partial join's object
	KindLimit    FieldKind = "limit"   // a positive integer, or an expression of type int
)

// Field describes one field of a document object.
type Field struct {
	Name string
	Kind FieldKind
	// Doc is one or two sentences for the reference and the schema's
	// description.
	Doc      string
	Required bool
	// Default is the value an absent field takes, spelled as in a
	// document; nil when there is none. DefaultDoc, when set, says it in
	// words instead ("the run input", "none").
	Default    any
	DefaultDoc string
	Enum       []string
	// Min and Max bound integers; MaxItems bounds lists.
	Min, Max int64
	MaxItems int
	// Pattern constrains strings; PatternDoc says it in words for messages.
	Pattern    *regexp.Regexp
	PatternDoc string
	// Expr is the type an expression must have.
	Expr expr.Kind
	// Fields are an object's fields, or each list item's.
	Fields []Field
	// Group names the fields of which exactly one (or, for an optional
	// group, at most one) may be set; see [WithSpec].
	Group string
	// Types limits a step-level field to these step types (none: every
	// type).
	Types []StepType
	// Mode limits a setting to one value of its spec's ModeField; a
	// required one is required in that mode only.
	Mode string
	// AnyCase accepts an enum's values in any letter case.
	AnyCase bool
	// Secrets lets an expression reference tenant secrets
	// (secret("NAME")); every other expression that does is refused.
	Secrets bool

	// read normalises the field into out instead of the kind's reader.
	read func(o object, f Field, out map[string]any)
}

// WithSpec is a step type's `with` settings.
type WithSpec struct {
	Type StepType
	// Doc says what the step does.
	Doc    string
	Fields []Field
	// Groups name mutually exclusive fields (Field.Group): exactly one of
	// each required group must be set, at most one of the others.
	Groups map[string]bool
	// ModeField names the enum field whose value other fields' Mode
	// depends on.
	ModeField string
}

// forbidOtherModes reports the fields set that belong to another mode
// than mode.
func (o object) forbidOtherModes(spec WithSpec, mode string) {
	for _, f := range spec.Fields {
		if f.Mode != "" && f.Mode != mode && o.has(f.Name) {
			o.problem(f.Name, "applies only in %s mode", f.Mode)
		}
	}
}

// Field returns the spec's field called name.
func (s WithSpec) Field(name string) (Field, bool) { return fieldNamed(s.Fields, name) }

func fieldNamed(fs []Field, name string) (Field, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

func fieldNames(fs []Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// Patterns the tables share.
var (
	keyPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	refPattern  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	namePattern = regexp.MustCompile(`^\S{1,128}$`)
)

const (
	keyShape  = "a definition key ([a-z0-9][a-z0-9-_]{0,62})"
	nameShape = "1 to 128 characters without spaces"
)

var outcomeNames = []string{"success", "error", "true", "false", "approved", "rejected", "done"}

// DocumentFields are the top level of a definition document.
var DocumentFields = []Field{
	{Name: "key", Kind: KindString, Required: true, Pattern: keyPattern,
		Doc: "Names the definition in its tenant; runs start it by key. Lowercase letters, digits, `-` and `_`, up to 63 characters."},
	{Name: "name", Kind: KindString, Doc: "A label for the dashboard."},
	{Name: "description", Kind: KindString, Doc: "Free text for people reading the definition."},
	{Name: "input_schema", Kind: KindSchema,
		Doc: "A JSON Schema (2020-12) that every trigger input must match; a run whose input does not is refused with 422."},
	{Name: "output_expr", Kind: KindExpr, Expr: expr.KindAny, DefaultDoc: "a map of the sink steps' outputs by ref",
		Doc: "The run's output, evaluated when it succeeds."},
	{Name: "timeout", Kind: KindDuration, DefaultDoc: "none",
		Doc: "How long the whole run may take; past it the run ends `timed_out`."},
	{Name: "limits", Kind: KindObject, Fields: LimitsFields,
		Doc: "Lowers the server's limits for this definition; each is clamped to the server's maximum."},
	{Name: "steps", Kind: KindList, Required: true, Fields: StepFields, MaxItems: MaxSteps,
		Doc: "The steps, in any order; at least one, at most 1,000."},
	{Name: "edges", Kind: KindList, Fields: EdgeFields, MaxItems: MaxEdges,
		Doc: "What runs after what. A step without incoming edges is an entrypoint."},
	{Name: "triggers", Kind: KindList, Fields: TriggerFields, MaxItems: MaxTriggers,
		Doc: "What starts runs without a caller: `{schedule: {…}}` or `{event: NAME, filter_expr?, input_expr?}`."},
	{Name: "concurrency", Kind: KindList, Fields: ConcurrencyFields, MaxItems: MaxConcurrencyRules,
		Doc: "How many runs run at once per key, each rule with its own key and limit; a run starts once every rule has a slot for it."},
	{Name: "debounce", Kind: KindObject, Fields: DebounceFields,
		Doc: "Coalesces a burst of starts of a key into one run, which starts with the last input once the key is quiet."},
	{Name: "throttle", Kind: KindObject, Fields: RateFields,
		Doc: "At most `limit` starts of a key per `period`; the others wait their turn, none is dropped."},
	{Name: "rate_limit", Kind: KindObject, Fields: RateFields,
		Doc: "At most `limit` starts of a key per `period`; the others are refused (429 `rate_limited` with Retry-After)."},
	{Name: "layout", Kind: KindAny,
		Doc: "Where the dashboard's editor draws steps placed by hand, `{REF: {x: …, y: …}}`. The compiler ignores it: it changes no manifest hash."},
}

// TriggerFields are a trigger's: a schedule, or an event.
var TriggerFields = []Field{
	{Name: "schedule", Kind: KindObject, Fields: ScheduleFields, Group: "trigger",
		Doc: "A schedule publishing the definition creates or updates (by `id`)."},
	{Name: "event", Kind: KindString, Pattern: namePattern, PatternDoc: nameShape, Group: "trigger",
		Doc: "Starts a run of the newest published version for every event of this name."},
	{Name: "filter_expr", Kind: KindExpr, Expr: expr.KindBool, Doc: "With `event`: which events start a run (`event` is the event's data)."},
	{Name: "input_expr", Kind: KindExpr, Expr: expr.KindAny, DefaultDoc: "the event's data", Doc: "With `event`: the run's input."},
}

// ScheduleFields are a declared schedule's.
var ScheduleFields = []Field{
	{Name: "id", Kind: KindString, DefaultDoc: "KEY-N", Doc: "Names the schedule; publishing again updates the schedule of that id."},
	{Name: "cron", Kind: KindCron, Doc: "When, as a cron expression (or give `interval`)."},
	{Name: "interval", Kind: KindDuration, Doc: "Every this long (or give `cron`)."},
	{Name: "offset", Kind: KindDuration, Doc: "Shifts an interval's ticks."},
	{Name: "timezone", Kind: KindString, Doc: "The cron's IANA time zone."},
	{Name: "jitter", Kind: KindDuration, Doc: "Delays each start by up to this long, at random."},
	{Name: "start_at", Kind: KindTime, Doc: "No runs before this time."},
	{Name: "end_at", Kind: KindTime, Doc: "No runs after this time."},
	{Name: "input", Kind: KindAny, Doc: "Each run's input."},
	{Name: "overlap", Kind: KindString, Doc: "What a start does while the previous run still runs."},
	{Name: "catchup_window", Kind: KindDuration, Doc: "How far back missed starts are made up."},
	{Name: "pause_on_failure", Kind: KindBool, Doc: "Pauses the schedule when a run fails."},
	{Name: "paused", Kind: KindBool, Doc: "Declares the schedule paused."},
}

// LimitsFields are a definition's limits.
var LimitsFields = []Field{
	{Name: "max_inline_children", Kind: KindInteger, Min: 1, Max: HardMaxInlineChildren, Default: DefaultMaxInlineChildren,
		Doc: "The default bound of this definition's inline scatters."},
	{Name: "transitions_soft", Kind: KindInteger, Min: 1, Max: 1<<31 - 1, Default: DefaultTransitionsSoft,
		Doc: "Transitions after which the run's history records a warning."},
	{Name: "transitions_hard", Kind: KindInteger, Min: 1, Max: 1<<31 - 1, Default: DefaultTransitionsHard,
		Doc: "Transitions after which the run continues as new automatically."},
	{Name: "transitions_terminate", Kind: KindInteger, Min: 1, Max: 1<<31 - 1, Default: DefaultTransitionsTerminate,
		Doc: "Transitions after which a run that cannot continue is terminated (`transition_limit`)."},
}

// StepFields are the fields every step has; `with` depends on the type
// ([WithSpecs]).
var StepFields = []Field{
	{Name: "ref", Kind: KindString, Required: true, Pattern: refPattern,
		Doc: "Names the step in edges and expressions (`steps.REF.output`); unique in the definition."},
	{Name: "type", Kind: KindEnum, Required: true, Enum: stepTypeNames(),
		Doc: "One of the fifteen step types."},
	{Name: "name", Kind: KindString, Doc: "A label for the dashboard."},
	{Name: "with", Kind: KindObject, Doc: "The type's settings."},
	{Name: "run_if", Kind: KindExpr, Expr: expr.KindBool,
		Doc: "When false, the step is skipped (and its outgoing edges are dead)."},
	{Name: "for_each", Kind: KindExpr, Expr: expr.KindList, Types: forEachTypes,
		Doc: "Runs the step once per element (`item`, `index`, `key`); its output is a `partition` gather of the results."},
	{Name: "join", Kind: KindJoin, Enum: []string{string(JoinAll), string(JoinAny)}, Default: string(JoinAll), Fields: joinFields,
		Doc: "`all`: ready once every incoming edge fired (skipped if one is dead); `any`: ready when the first fires; `{at_least: N, cancel_rest?}`: ready once N fired."},
	{Name: "on_error", Kind: KindEnum, Enum: []string{string(OnErrorFail), string(OnErrorContinue)}, Default: string(OnErrorFail),
		Doc: "`fail`: a failure fails the run; `continue`: its `error` and `done` edges fire and the run goes on."},
	{Name: "end_run", Kind: KindEnum, Enum: []string{string(EndSucceeded), string(EndFailed)},
		Doc: "When the step succeeds, the run ends with this status at once; its other steps are cancelled."},
	{Name: "retry", Kind: KindObject, Fields: RetryFields, Types: retryTypes,
		Doc: "How failed attempts are retried."},
	{Name: "timeout", Kind: KindDuration, Default: "60s", Types: retryTypes,
		Doc: "How long one attempt may take."},
	{Name: "concurrency", Kind: KindObject, Fields: StepConcurrencyFields, Types: retryTypes,
		Doc: "How many attempts run at once for a key, across every run and definition of the tenant whose steps name that key: a shared pool, for one vendor's API say."},
}

// joinFields are a partial join's.
var joinFields = []Field{
	{Name: "at_least", Kind: KindInteger, Required: true, Min: 1, Max: MaxEdges, Doc: "How many incoming edges must fire."},
	{Name: "cancel_rest", Kind: KindBool, Doc: "Cancels the unfinished predecessors once the step is ready."},
}

var (
	retryTypes   = []StepType{TypeTask, TypeHTTP}
	forEachTypes = []StepType{TypeTask, TypeHTTP, TypeTransform}
)

// RetryFields are a retry policy's.
var RetryFields = []Field{
	{Name: "max_attempts", Kind: KindInteger, Min: 1, Max: maxAttemptsCap, Default: DefaultMaxAttempts,
		Doc: "Attempts in all, the first included; 1 means no retry."},
	{Name: "initial_interval", Kind: KindDuration, Default: "1s", Doc: "The wait before the first retry."},
	{Name: "backoff_coefficient", Kind: KindNumber, Min: 1, Max: maxBackoff, Default: DefaultBackoff,
		Doc: "Each wait is the previous one times this."},
	{Name: "max_interval", Kind: KindDuration, Default: "1m", Doc: "The longest wait between attempts."},
	{Name: "jitter", Kind: KindBool, Default: true, Doc: "Spreads each wait randomly over its second half."},
}

// EdgeFields are an edge's, or a choice group's (`from` and `choice`).
var EdgeFields = []Field{
	{Name: "from", Kind: KindString, Required: true, Doc: "The source step's ref."},
	{Name: "to", Kind: KindString, Doc: "The target step's ref (not in a choice group)."},
	{Name: "on", Kind: KindEdge, Enum: outcomeNames, Default: string(OutcomeSuccess),
		Doc: "The source's outcome the edge fires on; `done` fires on any outcome."},
	{Name: "choice", Kind: KindList, Fields: ChoiceFields,
		Doc: "A choice group: branches tried in order when the source succeeds; the first whose `when` holds fires, else the default (last)."},
}

// ChoiceFields are a choice branch's.
var ChoiceFields = []Field{
	{Name: "when", Kind: KindExpr, Expr: expr.KindBool, Doc: "The branch's condition (not on the default)."},
	{Name: "default", Kind: KindBool, Doc: "Marks the default branch, which must come last."},
	{Name: "to", Kind: KindString, Required: true, Doc: "The target step's ref."},
}

func stepTypeNames() []string {
	out := make([]string, len(StepTypes))
	for i, t := range StepTypes {
		out[i] = string(t)
	}
	return out
}
