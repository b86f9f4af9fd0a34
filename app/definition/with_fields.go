package definition

import "github.com/ductor/ductor/app/expr"

// WithSpecs are the fifteen step types' `with` settings, in the order of
// [StepTypes].
var WithSpecs = []WithSpec{
	{Type: TypeTask, Doc: "Runs a named handler on a step worker: one of the server's Go handlers, or a handler of your own bridge-SDK worker.", Fields: taskFields},
	{Type: TypeHTTP, Doc: "Sends one HTTP request; a 2xx answer (or one of `expect_status`) succeeds, and the response is the output.", Fields: httpFields,
		Groups: map[string]bool{"url": true, "headers": false, "body": false}},
	{Type: TypeTransform, Doc: "Evaluates an expression; its value is the output. No side effects, no worker: it runs inside the coordinator's tick.", Fields: []Field{
		{Name: "expr", Kind: KindExpr, Expr: expr.KindAny, Required: true, Doc: "The output."},
	}},
	{Type: TypeCondition, Doc: "Evaluates a boolean expression and ends `true` or `false`, for `on: \"true\"` and `on: \"false\"` edges.", Fields: []Field{
		{Name: "expr", Kind: KindExpr, Expr: expr.KindBool, Required: true, Doc: "The condition."},
	}},
	{Type: TypeScatter, Doc: "Evaluates a list and starts one child per element: nodes of this run (`inline`) or child runs (`child_workflow`). It succeeds when every child has ended; its output is the children's outcomes in item order.", Fields: scatterFields, ModeField: "mode"},
	{Type: TypeGather, Doc: "Collapses an ancestor scatter's children into `{\"result\": [...], \"error\": {...}}`.", Fields: []Field{
		{Name: "scatter_ref", Kind: KindString, Required: true, Doc: "The scatter to gather; it must be an ancestor of this step."},
		{Name: "strategy", Kind: KindEnum, Enum: []string{"partition", "include", "drop", "raise"}, Default: "partition",
			Doc: "Failed children: `partition` puts successes in `result` and failures in `error` by child key; `include` keeps failures in `result` too; `drop` leaves them out; `raise` fails the gather."},
	}},
	{Type: TypeSubworkflow, Doc: "Starts a child run of another definition and, in `sync` mode, waits for it (or for one of its checkpoints).", Fields: subworkflowFields, ModeField: "mode"},
	{Type: TypeCheckpoint, Doc: "Marks a named point a parent's `wait_for: checkpoint:NAME` resumes on; passes its input through.", Fields: []Field{
		{Name: "name", Kind: KindString, Required: true, Pattern: namePattern, PatternDoc: nameShape, Doc: "The checkpoint's name."},
		{Name: "output_expr", Kind: KindExpr, Expr: expr.KindAny, DefaultDoc: "the run input", Doc: "The value the waiting parent receives."},
	}},
	{Type: TypeWait, Doc: "Parks the run on a durable timer; no worker waits.", Fields: waitFields,
		Groups: map[string]bool{"when": true}},
	{Type: TypeSignal, Doc: "Parks until a signal of this name is sent to the run; the signal's payload is the output.", Fields: []Field{
		{Name: "name", Kind: KindString, Required: true, Pattern: namePattern, PatternDoc: nameShape, Doc: "The signal's name."},
		timeoutField, onTimeoutField("skip"),
	}},
	{Type: TypeEvent, Doc: "Parks until a tenant event of this name (matching `match_expr`) arrives; the event's data is the output.", Fields: []Field{
		{Name: "name", Kind: KindString, Required: true, Pattern: namePattern, PatternDoc: nameShape, Doc: "The event's name."},
		matchField, timeoutField, onTimeoutField("skip"),
	}},
	{Type: TypeEventSet, Doc: "Parks until a correlated set of events has arrived, by policy; its output holds each member's event data by key.", Fields: eventSetFields},
	{Type: TypeDigest, Doc: "Collects the matching events of a window and releases them as one batch.", Fields: []Field{
		{Name: "name", Kind: KindString, Required: true, Pattern: namePattern, PatternDoc: nameShape, Doc: "The events' name."},
		matchField,
		{Name: "window", Kind: KindDuration, Required: true, Doc: "How long to collect, from the step's start."},
		{Name: "max_items", Kind: KindInteger, Min: 1, Max: 1_000_000, Default: 0, DefaultDoc: "no cap",
			Doc: "Releases the batch early once it holds this many events."},
	}},
	{Type: TypeApproval, Doc: "Parks until people approve or reject, in the inbox or through the API.", Fields: []Field{
		{Name: "approvers", Kind: KindStrings, Required: true, read: readApprovers,
			Doc: "Who may decide: user emails, `role:NAME` (every member with that role) and `key:NAME` (the API keys of that name)."},
		{Name: "title", Kind: KindString, Default: "", Doc: "What the inbox shows."},
		{Name: "description", Kind: KindString, Default: "", Doc: "More detail for the approvers."},
		{Name: "min_approvals", Kind: KindInteger, Min: 1, Max: 1000, Default: 1, Doc: "Approvals needed; one rejection rejects."},
		timeoutField, onTimeoutField("approve", "skip"),
	}},
	{Type: TypeHumanLoop, Doc: "Opens a case for people to work in the inbox; resumes when the case reaches `awaiting_status`, with the case's data as output.", Fields: []Field{
		{Name: "title", Kind: KindString, Required: true, Doc: "The case's title."},
		{Name: "assignees", Kind: KindStrings, Default: []any{}, DefaultDoc: "none", Doc: "Emails and `role:NAME` entries the case is assigned to."},
		{Name: "fields", Kind: KindSchema, Doc: "A JSON Schema of the case's data."},
		{Name: "awaiting_status", Kind: KindString, Default: "resolved", Doc: "The case status that resumes the run."},
		timeoutField, onTimeoutField("skip"),
	}},
}

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

var taskFields = []Field{
	{Name: "handler", Kind: KindString, Required: true, read: readHandler,
		Doc: "The handler's name: `builtin.noop`, `builtin.echo`, `builtin.sleep`, `builtin.fail`, a server handler, or one your workers register."},
	{Name: "queue", Kind: KindString, Default: "default",
		Doc: "The queue whose workers run it; any queue but `default` goes to bridge-SDK workers."},
	{Name: "input_expr", Kind: KindExpr, Expr: expr.KindAny, DefaultDoc: "the run input", Doc: "The handler's input."},
	{Name: "secrets", Kind: KindStrings, read: readSecretNames, DefaultDoc: "none",
		Doc: "Tenant secrets the handler receives beside its input (bridge-SDK workers: `task.secrets`), by name; never part of the stored input."},
	{Name: "schedule_to_start", Kind: KindDuration, read: readScheduleToStart, DefaultDoc: "the tenant's (5m)",
		Doc: "How long the task may wait for a worker to take it; past that it fails with `no_worker` (retried by the step's policy)."},
}

var httpFields = []Field{
	{Name: "url", Kind: KindString, Group: "url", read: readURL, Doc: "An absolute http or https URL."},
	{Name: "url_expr", Kind: KindExpr, Expr: expr.KindString, Group: "url", Secrets: true, Doc: "The URL, computed; may reference tenant secrets (`secret(\"NAME\")`)."},
	{Name: "method", Kind: KindEnum, Enum: httpMethods, Default: "GET", AnyCase: true, read: readMethod, Doc: "The method (any case)."},
	{Name: "headers", Kind: KindHeaders, Group: "headers", read: readHeaders, Doc: "Request headers."},
	{Name: "headers_expr", Kind: KindExpr, Expr: expr.KindMap, Group: "headers", Secrets: true,
		Doc: "Request headers, computed (a map of strings); may reference tenant secrets (`{\"X-Api-Key\": secret(\"NAME\")}`)."},
	{Name: "auth", Kind: KindObject, Fields: authFields, read: readAuth,
		Doc: "Sends a tenant secret as the `Authorization` header: `{bearer: NAME}`, or `{basic: {user: USER, password: NAME}}`."},
	{Name: "body", Kind: KindAny, Group: "body", Doc: "A JSON body, sent as written."},
	{Name: "body_expr", Kind: KindExpr, Expr: expr.KindAny, Group: "body", Secrets: true, Doc: "A JSON body, computed; may reference tenant secrets."},
	{Name: "expect_status", Kind: KindStatus, read: readExpectStatus, DefaultDoc: "any 2xx",
		Doc: "The status, or list of statuses, that count as success."},
}

// authFields are an http step's auth shorthand: a secret's name, sent
// as the Authorization header.
var authFields = []Field{
	{Name: "bearer", Kind: KindString, Group: "scheme", Pattern: expr.SecretNamePattern, PatternDoc: secretNameShape,
		Doc: "The secret sent as `Authorization: Bearer VALUE`."},
	{Name: "basic", Kind: KindObject, Fields: basicAuthFields, Group: "scheme", read: readBasicAuth,
		Doc: "HTTP Basic authentication: `user` in clear, `password` a secret's name."},
}

var basicAuthFields = []Field{
	{Name: "user", Kind: KindString, Required: true, Doc: "The user name."},
	{Name: "password", Kind: KindString, Required: true, Pattern: expr.SecretNamePattern, PatternDoc: secretNameShape,
		Doc: "The secret holding the password."},
}

var scatterFields = []Field{
	{Name: "items_expr", Kind: KindExpr, Expr: expr.KindList, Required: true, Doc: "The list to scatter over."},
	{Name: "key_expr", Kind: KindExpr, Expr: expr.KindAny, DefaultDoc: "the index", Doc: "Each child's key (`item`, `index` in scope); names inline children `REF[KEY]`."},
	{Name: "mode", Kind: KindEnum, Enum: []string{"inline", "child_workflow"}, Default: "inline",
		Doc: "`inline`: children are nodes of this run; `child_workflow`: each child is a run of `workflow`."},
	{Name: "concurrency", Kind: KindInteger, Min: 1, Max: HardMaxInlineChildren, Default: 0, DefaultDoc: "unbounded", Doc: "Children in flight at most."},
	{Name: "interval_ms", Kind: KindInteger, Min: 0, Max: 24 * 3600 * 1000, Default: 0, Doc: "Milliseconds between two dispatches."},
	{Name: "complete_when", Kind: KindExpr, Expr: expr.KindBool, read: readCompleteWhen,
		Doc: "Ends the scatter early once true, cancelling the children still running (`succeeded`, `failed`, `done`, `total`, `results` in scope)."},
	{Name: "do", Kind: KindObject, Fields: templateFields, Required: true, Mode: "inline", read: readTemplate,
		Doc: "The step template each child runs, of type task, http or transform."},
	{Name: "max_inline_children", Kind: KindInteger, Min: 1, Max: HardMaxInlineChildren, Mode: "inline", read: readMaxInline, DefaultDoc: "`limits.max_inline_children` (256)",
		Doc: "Inline mode: more items than this fails the scatter (it never truncates); at most 10,000."},
	{Name: "workflow", Kind: KindString, Required: true, Mode: "child_workflow", Pattern: keyPattern, PatternDoc: keyShape, Doc: "The definition each child runs."},
	{Name: "version", Kind: KindInteger, Min: 1, Max: 1<<31 - 1, Default: 0, Mode: "child_workflow", DefaultDoc: "the latest", Doc: "The version to run."},
	{Name: "input_expr", Kind: KindExpr, Expr: expr.KindAny, Mode: "child_workflow", DefaultDoc: "`item`", Doc: "Each child run's input."},
}

// templateFields are a scatter's `do` template.
var templateFields = []Field{
	{Name: "type", Kind: KindEnum, Required: true, Enum: []string{string(TypeTask), string(TypeHTTP), string(TypeTransform)}, Doc: "task, http or transform."},
	{Name: "with", Kind: KindObject, Doc: "The type's settings, as on a step of that type."},
	{Name: "timeout", Kind: KindDuration, Default: "60s", Doc: "task and http: how long one attempt may take."},
	{Name: "retry", Kind: KindObject, Fields: RetryFields, Doc: "task and http: the retry policy."},
	{Name: "concurrency", Kind: KindObject, Fields: StepConcurrencyFields, Doc: "task and http: how many children's attempts run at once for a key, shared across the tenant."},
}

var subworkflowFields = []Field{
	{Name: "workflow", Kind: KindString, Required: true, Pattern: keyPattern, PatternDoc: keyShape, Doc: "The child's definition key."},
	{Name: "version", Kind: KindInteger, Min: 1, Max: 1<<31 - 1, Default: 0, DefaultDoc: "the latest", Doc: "The version to run."},
	{Name: "mode", Kind: KindEnum, Enum: []string{"sync", "async"}, Default: "sync",
		Doc: "`sync`: wait for the child; `async`: start it and go on (its output is the child's id)."},
	{Name: "wait_for", Kind: KindString, Default: "terminal", Mode: "sync", read: readWaitFor,
		Doc: "`terminal` (the child's end) or `checkpoint:NAME` (the child reaching that checkpoint)."},
	{Name: "input_expr", Kind: KindExpr, Expr: expr.KindAny, DefaultDoc: "the run input", read: readChildInput,
		Doc: "The child's input (with `repeat`, the loop's variables in scope)."},
	{Name: "timeout", Kind: KindDuration, Default: 0, Mode: "sync", DefaultDoc: "none", Doc: "How long to wait."},
	{Name: "on_timeout", Kind: KindEnum, Enum: []string{"fail_parent", "detach", "continue_with_error"}, Default: "fail_parent", Mode: "sync",
		Doc: "Past the timeout: fail this step, detach the child and succeed, or end with an error edge; the child is never cancelled by it and runs on."},
	{Name: "repeat", Kind: KindObject, Fields: repeatFields, read: readRepeat,
		Doc: "Sync mode: runs the child again and again until `until_expr` holds, at most `max_iterations` times."},
}

var repeatFields = []Field{
	{Name: "until_expr", Kind: KindExpr, Expr: expr.KindBool, Required: true, Doc: "Ends the loop once true (the loop's variables in scope)."},
	{Name: "input_expr", Kind: KindExpr, Expr: expr.KindAny, Doc: "The next iteration's input."},
	{Name: "max_iterations", Kind: KindInteger, Required: true, Min: 1, Max: MaxIterations, Doc: "Iterations at most."},
}

var waitFields = []Field{
	{Name: "duration", Kind: KindDuration, Group: "when", Doc: "How long to wait."},
	{Name: "until", Kind: KindTime, Group: "when", read: readUntil, Doc: "An RFC 3339 time to wait until."},
	{Name: "cron", Kind: KindCron, Group: "when", read: readCron, Doc: "The next time a five-field cron expression matches."},
	{Name: "timezone", Kind: KindString, Default: "UTC", read: readNothing, Doc: "With `cron`: its IANA time zone."},
	{Name: "until_expr", Kind: KindExpr, Expr: expr.KindTimestamp, Group: "when", Doc: "A timestamp, computed (`now + duration(\"1h\")`)."},
}

var eventSetFields = []Field{
	{Name: "events", Kind: KindList, Required: true, MaxItems: maxEventSet, Fields: eventMemberFields, read: readEventList,
		Doc: "The members: each an event name with an optional `match_expr` and `key`."},
	{Name: "policy", Kind: KindEnum, Enum: []string{"all_required", "any", "quorum", "count", "until_timeout"}, Default: "all_required",
		Doc: "`all_required`: every member; `any`: the first; `quorum`/`count`: `n` of them; `until_timeout`: whatever arrived when the timeout fires."},
	{Name: "n", Kind: KindInteger, Min: 1, Max: maxEventSet, Default: 0, read: readEventSetN, DefaultDoc: "none",
		Doc: "With `quorum` and `count` (required): how many members."},
	timeoutField,
	onTimeoutField("succeed_partial"),
}

var eventMemberFields = []Field{
	{Name: "name", Kind: KindString, Required: true, Pattern: namePattern, PatternDoc: nameShape, Doc: "The event's name; members may share one."},
	matchField,
	{Name: "key", Kind: KindString, DefaultDoc: "the name, or NAME#INDEX when another member has the same name",
		Doc: "Identifies the member, counts it and keys the output; unique in the step (1 to 128 characters)."},
}

var (
	timeoutField = Field{Name: "timeout", Kind: KindDuration, Default: 0, DefaultDoc: "none", Doc: "How long to wait."}
	matchField   = Field{Name: "match_expr", Kind: KindExpr, Expr: expr.KindBool, DefaultDoc: "every event of the name",
		Doc: "Which events count (`event`, `input`, `steps` in scope)."}
)

// onTimeoutField is a parking step's on_timeout: fail, or one of others.
func onTimeoutField(others ...string) Field {
	return Field{Name: "on_timeout", Kind: KindEnum, Enum: append([]string{"fail"}, others...), Default: "fail",
		Doc: "What the timeout does: `fail` the step, or " + orList(others) + "."}
}

func orList(xs []string) string {
	out := ""
	for i, x := range xs {
		switch {
		case i == 0:
		case i == len(xs)-1:
			out += " or "
		default:
			out += ", "
		}
		out += "`" + x + "`"
	}
	return out
}

// WithSpecOf returns the spec of step type t.
func WithSpecOf(t StepType) (WithSpec, bool) {
	for _, s := range WithSpecs {
		if s.Type == t {
			return s, true
		}
	}
	return WithSpec{}, false
}
