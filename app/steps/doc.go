// Package steps executes one attempt of a worker step: a `task` (a named
// Go handler from a [Registry]) or an `http` request. The step worker
// receives an [engine.DispatchAttempt], builds a [Request] from it, calls
// [Executor.Execute] and records the output or the [engine.Error] it
// returns as the attempt's result. This package does no persistence and
// knows nothing of River.
//
// # An attempt
//
// Execute runs the step on its own goroutine under a context carrying the
// attempt's timeout, and returns when the step returns or the deadline
// passes, whichever is first. So:
//
//   - a deadline fails the attempt as timeout (retryable), also when the
//     handler ignores its context; such a handler's goroutine is abandoned
//     and runs on until it returns, which Go cannot prevent;
//   - the caller's context ending first fails it as cancelled (retryable);
//   - a panic (or runtime.Goexit) fails it as panic (retryable), with the
//     stack logged to the logger given by [WithLogger];
//   - the output is brought to the JSON value model of package jsonvalue
//     (map[string]any, []any, string, bool, int64, float64, nil) and
//     capped ([DefaultMaxOutputBytes], [WithMaxOutputBytes]); a bigger
//     output fails as payload_too_large, and a value that is not JSON or
//     cannot be stored (a NUL character, a NaN) as invalid_output,
//     neither retryable.
//
// Error messages are truncated to 4 KiB.
//
// # Task steps
//
// Params `handler` names the handler and `input` (the evaluated
// input_expr, or the run's input) is passed as [Call.Input] with the
// idempotency key, which is the same for every automatic retry of a node
// so a handler can deduplicate its side effects. A plain error from a
// handler is retryable (task_failed); [Permanent] makes it final and
// [Fail] sets the code. A name with no handler fails as unknown_handler;
// a worker that can route tasks to remote (bridge-SDK) workers asks
// [Registry.Lookup] first.
//
// Built-ins, always registered: builtin.noop (output {}), builtin.echo
// (output = input), builtin.sleep ({"ms": N}; honours cancellation;
// output {"slept_ms": N}) and builtin.fail ({"message", "retryable"};
// fails as task_failed, not retryable unless "retryable" is true).
//
// # HTTP steps
//
// Params: `url` (http or https), `method` (GET), `headers` (map of
// strings), `body` (a string is sent as-is, anything else as JSON with
// Content-Type application/json) and `expect_status` (a status or a list;
// default any 2xx). Requests carry `User-Agent: Ductor/VERSION` (a header
// may override it), `Idempotency-Key: <key>` (it may not) and the
// attempt's W3C `traceparent`. The output is
//
//	{"status": 200, "headers": {"content-type": "…"}, "body": …}
//
// with header names in lower case and repeated values joined with ", ",
// and the body parsed when the response's media type is JSON (…/json or
// …+json) and kept as text otherwise. Bodies are read up to
// HTTPOptions.MaxResponseBytes (payload_too_large past it). An unexpected
// status fails as http_status, retryable for 5xx, 408 and 429 only, and
// still returns the response as output for the attempt record; network
// failures are http_error (retryable); bad params are invalid_step.
//
// # SSRF guard
//
// Every connection the http client opens is checked by a net.Dialer
// Control hook, which sees the resolved IP actually being connected to,
// after DNS and before connect(2): redirects (at most 5, http and https
// only) and DNS rebinding go through the same check. Loopback, private
// (RFC 1918, fc00::/7), link-local (169.254.0.0/16 with the cloud
// metadata address, fe80::/10), unspecified, multicast, CGNAT
// (100.64.0.0/10), documentation, benchmarking, reserved and transition
// ranges are refused — IPv4-mapped IPv6 and NAT64 (64:ff9b::/96) forms are
// judged as the IPv4 address they carry — unless the address is inside
// HTTPOptions.Allow (DUCTOR_HTTP_ALLOW). A refusal fails the attempt as
// ssrf_blocked, not retryable, naming the address. The client ignores
// proxy settings from the environment, since a proxy would connect out
// of the guard's sight.
package steps
