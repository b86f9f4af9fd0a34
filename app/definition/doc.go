// Package definition compiles workflow definition documents into
// manifests: the immutable, hashed plans that runs execute.
//
// A definition is authored as JSON, YAML (same schema) or Go values
// ([Definition], which marshal to that JSON). Compilation is a pure
// function: no I/O, no clock, no database.
//
//	doc ──parse──▶ tree ──check──▶ steps, edges, limits ──graph──▶ order
//	                                     │                          │
//	                              CEL expressions ──compile──▶ problems or Manifest + hash
//
// # Checks
//
// Parsing reads JSON (strictly: valid UTF-8, no duplicate names) or YAML
// (one document, no duplicate keys, aliases bounded) up to
// [MaxDocumentBytes]. The checker then walks the whole document once and
// records every problem with its path ("steps[3].with.items_expr") and
// step ref, never stopping at the first: unknown fields, key and ref
// formats, unique refs, canonical step types (an alias such as "sleep" is
// rejected with the canonical name), each type's required and exclusive
// `with` settings and enums, durations (Go style or ISO-8601), cron
// expressions and timezones, JSON Schemas, edge endpoints and outcomes,
// choice groups, duplicate edges and self-loops, limits. The graph stage
// sorts the steps (Kahn, ties broken by ref), names the steps of every
// cycle, and checks each gather's scatter_ref is an ancestor. Finally every
// CEL expression is compiled once through package expr, in parallel.
// Problems come back together as an [*InvalidError].
//
// # Field tables
//
// Every object of a document is described by a table of [Field]s
// ([DocumentFields], [StepFields], [WithSpecs], …): name, kind, default,
// enum, bounds, required, and a sentence of documentation. The checker
// reads each object through its table (unknown fields, required ones,
// enums, bounds and defaults come from there; a field's custom reader or
// its type's checker adds what a table cannot say), [DocumentSchema]
// generates the JSON Schema editors use from the same tables, and the
// reference documentation renders its field tables from them. A new
// setting is a new table entry.
//
// # The manifest
//
// A [Manifest] has steps sorted by ref, edges sorted by (from, to, on,
// choice index), every default explicit (retry, timeouts, join, on_error,
// each type's `with` defaults) and every duration in milliseconds (fields
// suffixed _ms). Its hash is the hex SHA-256 of its RFC 8785 canonical
// JSON ([CanonicalJSON]), so a definition hashes the same whatever its
// format, key order, step order, duration spelling, or whether it spells
// out defaults; any change of meaning changes the hash.
//
// # Normalised `with` settings
//
// In a manifest, each type's With holds exactly these keys (optional ones
// only when set); integers are int64, and the engine reads the same keys
// back from stored JSON:
//
//	task         handler, queue, [input_expr], [schedule_to_start_ms]
//	http         url | url_expr, method, [headers], [body | body_expr], [expect_status (list)]
//	transform    expr
//	condition    expr
//	scatter      items_expr, [key_expr], mode, concurrency, interval_ms, [complete_when], and
//	             inline: max_inline_children, do {type, with, timeout_ms, retry, [concurrency]}
//	             child_workflow: workflow, version, [input_expr]
//	gather       scatter_ref, strategy
//	subworkflow  workflow, version, mode, wait_for, [input_expr], timeout_ms, on_timeout,
//	             [repeat {until_expr, [input_expr], max_iterations}]
//	checkpoint   name, [output_expr]
//	wait         one of duration_ms | until (RFC 3339, UTC) | cron + timezone | until_expr
//	signal       name, timeout_ms, on_timeout
//	event        name, [match_expr], timeout_ms, on_timeout
//	event_set    events [{name, key, [match_expr]}], policy, n, timeout_ms, on_timeout
//	digest       name, [match_expr], window_ms, max_items
//	approval     approvers, title, description, min_approvals, timeout_ms, on_timeout
//	human_loop   title, assignees, [fields], awaiting_status, timeout_ms, on_timeout
//
// # Decisions the contract leaves open
//
//   - retry and a per-attempt timeout apply only to task and http steps
//     (and scatter templates of those types); on other types they are an
//     error rather than silently ignored.
//   - A choice group's default branch must come last, and a source's
//     choice edges count as success edges for duplicate detection.
//   - limits.max_inline_children is the default bound of the definition's
//     inline scatters; a scatter may set its own (at most 10,000). Both
//     are clamped to the server's maximum ([Options]).
//   - Optional settings without a value (0) are emitted explicitly:
//     concurrency 0 (unbounded), version 0 (latest), timeout_ms 0 (none),
//     max_items 0 (no cap), n 0 (not a quorum policy).
//   - Wait times given as `until` are normalised to UTC; a cron's timezone
//     defaults to UTC.
//
// # Flow control (flow_rules.go)
//
// The document's concurrency rules ({key_expr?, limit, strategy}),
// debounce ({key_expr?, period, max_wait?}), throttle and rate_limit
// ({key_expr?, limit, period}) become Manifest.Concurrency, Debounce,
// Throttle and RateLimit, durations in milliseconds; a task or http
// step's concurrency ({key_expr, limit}) becomes Step.Concurrency, and a
// scatter template's is kept in its `do` as {key_expr, limit | limit_expr}.
// A limit is an integer or an expression of type int: in the manifest,
// Limit or LimitExpr. Without key_expr a rule has one key for the whole
// definition; two concurrency rules with one key are an error.
//
// # Beyond edges (control.go; docs/beyond-edges.md)
//
// A step's join is "all", "any" or {at_least: N, cancel_rest?}; in the
// manifest {at_least: 1} is "any" (so both hash alike), N ≥ 2 is join
// "at_least" with join_at_least N, and cancel_rest is join_cancel_rest.
// N may not exceed the step's incoming edges. end_run (succeeded |
// failed) ends the run once the step succeeds, so a success-side edge out
// of it (success, true, false, approved, rejected, a choice group) is an
// error: only error and done edges may leave it. A scatter's
// complete_when is a CEL bool over succeeded, failed, done, total and
// results; a sync subworkflow waiting for its child's end takes repeat
// {until_expr, input_expr?, max_iterations ≤ 10,000}, whose expressions
// (and the step's with.input_expr) read output and iteration. Those
// scoped variables compile anywhere but are refused, naming the fields
// that provide them, in every other field.
package definition
