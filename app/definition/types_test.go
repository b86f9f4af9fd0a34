package definition

import "testing"

// One passing and at least one failing case for each step type.
func TestStepTypes(t *testing.T) {
	t.Parallel()
	runRules(t, []ruleCase{
		{"task", one(`{ref: s, type: task, with: {handler: h, queue: q, input_expr: "input.x"}}`), nil},
		{"task without handler", one(`{ref: s, type: task, with: {queue: q}}`),
			[]want{{"steps[0].with.handler", "s", "is required"}}},
		{"task with empty handler", one(`{ref: s, type: task, with: {handler: ""}}`),
			[]want{{"steps[0].with.handler", "s", "must not be empty"}}},
		{"task with a built-in handler", one(`{ref: s, type: task, with: {handler: builtin.sleep, schedule_to_start: 30s}}`), nil},
		{"task with an unknown built-in handler", one(`{ref: s, type: task, with: {handler: builtin.slep}}`),
			[]want{{"steps[0].with.handler", "s", `unknown built-in handler "builtin.slep": did you mean "builtin.sleep"?`}}},
		{"task with a bad schedule_to_start", one(`{ref: s, type: task, with: {handler: h, schedule_to_start: -1s}}`),
			[]want{{"steps[0].with.schedule_to_start", "s", "must be positive"}}},

		{"http", one(`{ref: s, type: http, with: {url: "https://x.test/a", method: post, headers: {A: b}, body: {n: 1}, expect_status: [200, 201]}}`), nil},
		{"http url_expr", one(`{ref: s, type: http, with: {url_expr: '"https://x.test/" + input.id', body_expr: "input"}}`), nil},
		{"http without url", one(`{ref: s, type: http, with: {method: GET}}`),
			[]want{{"steps[0].with", "s", `one of "url", "url_expr" is required`}}},
		{"http with url and url_expr", one(`{ref: s, type: http, with: {url: "https://x.test", url_expr: '"a"'}}`),
			[]want{{"steps[0].with.url_expr", "s", "set only one of"}}},
		{"http with body and body_expr", one(`{ref: s, type: http, with: {url: "https://x.test", body: 1, body_expr: "2"}}`),
			[]want{{"steps[0].with.body_expr", "s", "set only one of"}}},
		{"http bad url, method, status", one(`{ref: s, type: http, with: {url: "ftp://x", method: FETCH, expect_status: 700}}`),
			[]want{
				{"steps[0].with.url", "s", "absolute http or https URL"},
				{"steps[0].with.method", "s", `not "FETCH"`},
				{"steps[0].with.expect_status", "s", "from 100 to 599"},
			}},
		{"http url_expr not a string", one(`{ref: s, type: http, with: {url_expr: "1"}}`),
			[]want{{"steps[0].with.url_expr", "s", "must evaluate to string"}}},

		{"transform", one(`{ref: s, type: transform, with: {expr: '{"a": input.a}'}}`), nil},
		{"transform without expr", one(`{ref: s, type: transform}`),
			[]want{{"steps[0].with.expr", "s", "is required"}}},
		{"transform bad CEL", one(`{ref: s, type: transform, with: {expr: "input.a +"}}`),
			[]want{{"steps[0].with.expr", "s", "invalid expression"}}},

		{"condition", one(`{ref: s, type: condition, with: {expr: "input.a > 1"}}`), nil},
		{"condition not bool", one(`{ref: s, type: condition, with: {expr: "1 + 1"}}`),
			[]want{{"steps[0].with.expr", "s", "must evaluate to bool"}}},

		{"scatter inline", one(`{ref: s, type: scatter, with: {items_expr: "input.xs", key_expr: "item.id", concurrency: 4, interval_ms: 10, do: {type: http, with: {url_expr: "item.url"}, retry: {max_attempts: 2}}}}`), nil},
		{"scatter child_workflow", one(`{ref: s, type: scatter, with: {items_expr: "input.xs", mode: child_workflow, workflow: child, version: 2, input_expr: "item"}}`), nil},
		{"scatter without do", one(`{ref: s, type: scatter, with: {items_expr: "input.xs"}}`),
			[]want{{"steps[0].with.do", "s", "is required in inline mode"}}},
		{"scatter items not a list", one(`{ref: s, type: scatter, with: {items_expr: '"a"', do: {type: transform, with: {expr: item}}}}`),
			[]want{{"steps[0].with.items_expr", "s", "must evaluate to list"}}},
		{"scatter template checked like a step", one(`{ref: s, type: scatter, with: {items_expr: "input.xs", do: {type: http, with: {url_expr: "item.url +"}, timeout: forever}}}`),
			[]want{
				{"steps[0].with.do.timeout", "s", "invalid duration"},
				{"steps[0].with.do.with.url_expr", "s", "invalid expression"},
			}},
		{"scatter template type", one(`{ref: s, type: scatter, with: {items_expr: "input.xs", do: {type: condition, with: {expr: "true"}}}}`),
			[]want{{"steps[0].with.do.type", "s", "task, http or transform"}}},
		{"scatter template without handler", one(`{ref: s, type: scatter, with: {items_expr: "input.xs", do: {type: task}}}`),
			[]want{{"steps[0].with.do.with.handler", "s", "is required"}}},
		{"scatter mode fields", one(`{ref: s, type: scatter, with: {items_expr: "input.xs", mode: child_workflow, do: {type: task, with: {handler: h}}, max_inline_children: 5}}`),
			[]want{
				{"steps[0].with.do", "s", "applies only in inline mode"},
				{"steps[0].with.max_inline_children", "s", "applies only in inline mode"},
				{"steps[0].with.workflow", "s", "is required"},
			}},
		{"scatter over the hard cap", one(`{ref: s, type: scatter, with: {items_expr: "input.xs", max_inline_children: 10001, do: {type: task, with: {handler: h}}}}`),
			[]want{{"steps[0].with.max_inline_children", "s", "between 1 and 10000"}}},

		{"gather", withEdges(one(scatterStep("sc"), `{ref: g, type: gather, with: {scatter_ref: sc, strategy: raise}}`), `{from: sc, to: g}`), nil},
		{"gather of a non-scatter", withEdges(one(`{ref: a, type: task, with: {handler: h}}`, `{ref: g, type: gather, with: {scatter_ref: a}}`), `{from: a, to: g}`),
			[]want{{"steps[1].with.scatter_ref", "g", `"a" is a task step, not a scatter`}}},
		{"gather strategy", withEdges(one(scatterStep("sc"), `{ref: g, type: gather, with: {scatter_ref: sc, strategy: keep}}`), `{from: sc, to: g}`),
			[]want{{"steps[1].with.strategy", "g", `must be one of "partition", "include", "drop", "raise"`}}},

		{"subworkflow", one(`{ref: s, type: subworkflow, with: {workflow: child, version: 3, wait_for: "checkpoint:half", timeout: 1h, on_timeout: detach, input_expr: "input"}}`), nil},
		{"subworkflow async", one(`{ref: s, type: subworkflow, with: {workflow: child, mode: async}}`), nil},
		{"subworkflow bad wait_for", one(`{ref: s, type: subworkflow, with: {workflow: child, wait_for: later}}`),
			[]want{{"steps[0].with.wait_for", "s", `"terminal" or "checkpoint:NAME"`}}},
		{"subworkflow async waits", one(`{ref: s, type: subworkflow, with: {workflow: Child, mode: async, wait_for: "checkpoint:x"}}`),
			[]want{
				{"steps[0].with.workflow", "s", "must be a definition key"},
				{"steps[0].with.wait_for", "s", "applies only in sync mode"},
			}},

		{"checkpoint", one(`{ref: s, type: checkpoint, with: {name: half, output_expr: "input"}}`), nil},
		{"checkpoint without name", one(`{ref: s, type: checkpoint}`),
			[]want{{"steps[0].with.name", "s", "is required"}}},

		{"wait duration", one(`{ref: s, type: wait, with: {duration: PT90S}}`), nil},
		{"wait until", one(`{ref: s, type: wait, with: {until: "2030-01-02T03:04:05+02:00"}}`), nil},
		{"wait cron", one(`{ref: s, type: wait, with: {cron: "0 9 * * 1-5", timezone: America/New_York}}`), nil},
		{"wait until_expr", one(`{ref: s, type: wait, with: {until_expr: 'now + duration("1h")'}}`), nil},
		{"wait with nothing", one(`{ref: s, type: wait}`),
			[]want{{"steps[0].with", "s", `one of "duration", "until", "cron", "until_expr" is required`}}},
		{"wait with two", one(`{ref: s, type: wait, with: {duration: 1s, cron: "* * * * *"}}`),
			[]want{{"steps[0].with.cron", "s", "set only one of"}}},
		{"wait bad values", one(`{ref: s, type: wait, with: {duration: soon}}`, `{ref: t, type: wait, with: {until: tomorrow}}`,
			`{ref: u, type: wait, with: {cron: "61 * * * *", timezone: Mars/Olympus}}`, `{ref: v, type: wait, with: {until_expr: "1"}}`,
			`{ref: w, type: wait, with: {duration: 1s, timezone: UTC}}`, `{ref: x, type: wait, with: {duration: "-1s"}}`),
			[]want{
				{"steps[0].with.duration", "s", "invalid duration"},
				{"steps[1].with.until", "t", "RFC 3339"},
				{"steps[2].with.timezone", "u", `unknown timezone "Mars/Olympus"`},
				{"steps[2].with.cron", "u", "invalid cron expression"},
				{"steps[3].with.until_expr", "v", "must evaluate to timestamp"},
				{"steps[4].with.timezone", "w", "applies only with cron"},
				{"steps[5].with.duration", "x", "must be positive"},
			}},

		{"signal", one(`{ref: s, type: signal, with: {name: go, timeout: 1h, on_timeout: skip}}`), nil},
		{"signal on_timeout", one(`{ref: s, type: signal, with: {name: go, on_timeout: retry}}`),
			[]want{{"steps[0].with.on_timeout", "s", `must be one of "fail", "skip"`}}},

		{"event", one(`{ref: s, type: event, with: {name: order.paid, match_expr: "event.data.id == input.id"}}`), nil},
		{"event match not bool", one(`{ref: s, type: event, with: {name: "two words", match_expr: "1"}}`),
			[]want{
				{"steps[0].with.name", "s", "without spaces"},
				{"steps[0].with.match_expr", "s", "must evaluate to bool"},
			}},

		{"event_set", one(`{ref: s, type: event_set, with: {events: [{name: a}, {name: b, match_expr: "event.ok"}], policy: quorum, n: 2, timeout: 1h, on_timeout: succeed_partial}}`), nil},
		{"event_set members share a name", one(`{ref: s, type: event_set, with: {events: [{name: ack, match_expr: 'event.from == "a"'}, {name: ack, match_expr: 'event.from == "b"'}, {name: ack, key: third}, {name: nack}]}}`), nil},
		{"event_set rules", one(`{ref: s, type: event_set, with: {events: [{name: a}, {name: a, match_expr: "event +"}, {name: b, key: "a#0"}, {name: c, key: ""}], policy: count}}`,
			`{ref: t, type: event_set, with: {events: [{name: a}], n: 1, policy: until_timeout}}`, `{ref: u, type: event_set, with: {events: []}}`),
			[]want{
				{"steps[0].with.events[1].match_expr", "s", "invalid expression"},
				{"steps[0].with.events[2].key", "s", `duplicate key "a#0" (also events[0])`},
				{"steps[0].with.events[3].key", "s", "must be a string of 1 to 128 characters"},
				{"steps[0].with.n", "s", "is required with policy count"},
				{"steps[1].with.n", "t", "applies only to policies quorum and count"},
				{"steps[1].with.timeout", "t", "is required with policy until_timeout"},
				{"steps[2].with.events", "u", "needs at least one event"},
			}},
		{"event_set n too big", one(`{ref: s, type: event_set, with: {events: [{name: a}], policy: quorum, n: 2}}`),
			[]want{{"steps[0].with.n", "s", "between 1 and 1"}}},

		{"digest", one(`{ref: s, type: digest, with: {name: x, match_expr: "true", window: 5m, max_items: 100}}`), nil},
		{"digest without window", one(`{ref: s, type: digest, with: {name: x}}`),
			[]want{{"steps[0].with.window", "s", "is required"}}},

		{"approval", one(`{ref: s, type: approval, with: {approvers: ["a@b.test", "role:finance", "key:deployer"], title: Pay?, min_approvals: 2, timeout: P1D, on_timeout: approve}}`), nil},
		{"approval rules", one(`{ref: s, type: approval, with: {approvers: [bob, "role:", "key: "], min_approvals: 0}}`, `{ref: t, type: approval}`),
			[]want{
				{"steps[0].with.approvers[0]", "s", "email, role:NAME or key:NAME"},
				{"steps[0].with.approvers[1]", "s", "email, role:NAME or key:NAME"},
				{"steps[0].with.approvers[2]", "s", "email, role:NAME or key:NAME"},
				{"steps[0].with.min_approvals", "s", "between 1 and 1000"},
				{"steps[1].with.approvers", "t", "is required"},
			}},

		{"human_loop", one(`{ref: s, type: human_loop, with: {title: Review, assignees: ["role:ops"], fields: {type: object}, awaiting_status: done}}`), nil},
		{"human_loop rules", one(`{ref: s, type: human_loop, with: {fields: {type: 12}}}`),
			[]want{
				{"steps[0].with.title", "s", "is required"},
				{"steps[0].with.fields", "s", "invalid JSON Schema"},
			}},
	})
}

func scatterStep(ref string) string {
	return `{ref: ` + ref + `, type: scatter, with: {items_expr: "input.xs", do: {type: task, with: {handler: h}}}}`
}
