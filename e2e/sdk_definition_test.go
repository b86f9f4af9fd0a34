package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/sdk"
)

// sdkEveryStep is a definition with each of the fifteen builders.
func sdkEveryStep() *sdk.Definition {
	yes := false
	return &sdk.Definition{
		Key: "sdk-every-step", Name: "Every step", Timeout: 72 * time.Hour,
		InputSchema: map[string]any{"type": "object"},
		Limits:      &sdk.Limits{MaxInlineChildren: 100},
		Steps: []sdk.Step{
			sdk.TaskStep("task", sdk.TaskWith{Handler: "builtin.echo", Queue: "default", InputExpr: "input", ScheduleToStart: 10 * time.Minute}).
				WithRetry(sdk.Retry{MaxAttempts: 5, InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 1.5, MaxInterval: time.Minute, Jitter: &yes}).
				WithTimeout(90 * time.Second).Named("Echo"),
			sdk.HTTPStep("http", sdk.HTTPWith{URL: "https://api.example.com/orders", Method: "post", Headers: map[string]string{"X-A": "b"},
				Body: map[string]any{"a": 1}, ExpectStatus: []int{200, 201}}),
			sdk.TransformStep("transform", `{"n": 1}`).If("true"),
			sdk.ConditionStep("condition", "input.size() > 0"),
			sdk.ScatterStep("scatter", sdk.ScatterWith{ItemsExpr: "[1, 2]", KeyExpr: "string(item)", Concurrency: 2, IntervalMS: 5,
				MaxInlineChildren: 10, Do: &sdk.Template{Type: sdk.TypeHTTP, With: sdk.HTTPWith{URLExpr: `"https://x.test/" + string(item)`}, Timeout: time.Second}}),
			sdk.GatherStep("gather", "scatter", "include"),
			sdk.ScatterStep("children", sdk.ScatterWith{ItemsExpr: "[1]", Mode: "child_workflow", Workflow: "child", Version: 2, InputExpr: "item"}),
			sdk.SubworkflowStep("sub", sdk.SubworkflowWith{Workflow: "child", WaitFor: "checkpoint:ready", Timeout: time.Hour, OnTimeout: "detach"}),
			sdk.SubworkflowStep("async", sdk.SubworkflowWith{Workflow: "child", Mode: "async"}),
			sdk.CheckpointStep("checkpoint", "ready", `{"ok": true}`),
			sdk.WaitStep("wait", sdk.WaitWith{Duration: 90 * time.Second}),
			sdk.WaitStep("until", sdk.WaitWith{Until: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}),
			sdk.WaitStep("cron", sdk.WaitWith{Cron: "0 2 * * *", Timezone: "Europe/Paris"}),
			sdk.SignalStep("signal", sdk.SignalWith{Name: "go", Timeout: time.Hour, OnTimeout: "skip"}),
			sdk.EventStep("event", sdk.EventWith{Name: "paid", MatchExpr: "event.id == input.id", Timeout: time.Hour}),
			sdk.EventSetStep("event_set", sdk.EventSetWith{Events: []sdk.EventMember{{Name: "a"}, {Name: "b", MatchExpr: "true"}, {Name: "b", Key: "second-b"}},
				Policy: "quorum", N: 1, Timeout: time.Hour, OnTimeout: "succeed_partial"}),
			sdk.DigestStep("digest", sdk.DigestWith{Name: "signup", Window: 10 * time.Minute, MaxItems: 50}),
			sdk.ApprovalStep("approval", sdk.ApprovalWith{Approvers: []string{"a@example.com", "role:admin"}, Title: "OK?", MinApprovals: 2, Timeout: time.Hour, OnTimeout: "approve"}),
			sdk.HumanLoopStep("human_loop", sdk.HumanLoopWith{Title: "Look", Assignees: []string{"role:operator"},
				Fields: map[string]any{"type": "object"}, AwaitingStatus: "done", Timeout: 24 * time.Hour}),
			sdk.TransformStep("each", `item`).Each("[1, 2]").JoinAny().ContinueOnError(),
		},
		Edges: []sdk.Edge{
			sdk.Then("task", "http"),
			sdk.On("condition", "transform", sdk.OutcomeTrue),
			sdk.On("approval", "each", sdk.OutcomeApproved),
			sdk.On("approval", "wait", sdk.OutcomeDone),
			sdk.Then("scatter", "gather"),
			sdk.Choose("checkpoint", sdk.When("input.x == 1", "signal"), sdk.Otherwise("event")),
		},
	}
}

// A definition built with every builder marshals to a document the
// served JSON Schema accepts and the compiler compiles exactly as its
// YAML twin.
func TestSDKDefinitionsMarshalToTheDocument(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(server.New(server.Deps{API: true, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/api/v1/schemas/definition.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("definition.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("definition.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range []struct {
		def  *sdk.Definition
		yaml string
	}{{sdkEveryStep(), sdkEveryStepYAML}, {sdkEveryField(), sdkEveryFieldYAML}} {
		doc, err := json.Marshal(pair.def)
		if err != nil {
			t.Fatal(err)
		}
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if err := schema.Validate(inst); err != nil {
			t.Fatalf("the served schema refuses the SDK's document: %v\n%s", err, doc)
		}
		fromGo, err := definition.Compile(doc, definition.FormatJSON)
		if err != nil {
			t.Fatalf("the SDK's document does not compile: %v\n%s", err, doc)
		}
		fromYAML, err := definition.Compile([]byte(pair.yaml), definition.FormatYAML)
		if err != nil {
			t.Fatal(err)
		}
		if fromGo.Hash != fromYAML.Hash {
			t.Errorf("the SDK's document compiles differently from its YAML twin:\n%s\n%s", fromGo.JSON, fromYAML.JSON)
		}
	}
}

// sdkEveryField is a definition with the fields sdkEveryStep leaves out:
// triggers, flow control, step pools, partial joins, end_run,
// complete_when and repeat.
func sdkEveryField() *sdk.Definition {
	jan := func(year int) time.Time { return time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC) }
	return &sdk.Definition{
		Key: "sdk-every-field",
		Triggers: []sdk.Trigger{
			sdk.OnSchedule(sdk.ScheduleTrigger{ID: "nightly", Cron: "0 2 * * *", Timezone: "America/New_York", Input: map[string]any{"format": "pdf"},
				Overlap: "buffer_one", CatchupWindow: 2 * time.Hour, Jitter: time.Minute, StartAt: jan(2030), EndAt: jan(2031), PauseOnFailure: true}),
			sdk.OnSchedule(sdk.ScheduleTrigger{ID: "hourly", Interval: time.Hour, Offset: 5 * time.Minute, Paused: true}),
			{Event: "order.placed", FilterExpr: "event.total > 100.0", InputExpr: `{"order": event.id}`},
			sdk.OnEvent("order.updated", ""),
		},
		Concurrency: []sdk.Concurrency{
			{KeyExpr: "input.customer", Limit: 2},
			{LimitExpr: `input.tier == "premium" ? 10 : 1`, Strategy: "cancel_newest"},
		},
		RateLimit: &sdk.Rate{KeyExpr: "input.customer", Limit: 10, Period: time.Minute},
		Throttle:  &sdk.Rate{Limit: 5, Period: time.Second},
		Debounce:  &sdk.Debounce{KeyExpr: "input.customer", Period: 10 * time.Second, MaxWait: time.Minute},
		Steps: []sdk.Step{
			sdk.TaskStep("a", sdk.TaskWith{Handler: "builtin.echo"}).Limited(`"vendor"`, 3),
			sdk.TransformStep("b", "1"),
			sdk.TransformStep("c", "2").JoinN(1, true),
			sdk.ScatterStep("fan", sdk.ScatterWith{ItemsExpr: "[1, 2, 3]", CompleteWhen: "succeeded >= 2",
				Do: &sdk.Template{Type: sdk.TypeTask, With: sdk.TaskWith{Handler: "builtin.echo"},
					Concurrency: &sdk.StepConcurrency{KeyExpr: `"vendor"`, LimitExpr: "1 + 1"}}}),
			sdk.SubworkflowStep("loop", sdk.SubworkflowWith{Workflow: "child", InputExpr: `{"page": 1}`,
				Repeat: &sdk.Repeat{UntilExpr: "!output.more", InputExpr: `{"page": output.page + 1}`, MaxIterations: 5}}),
			sdk.TransformStep("done", "3").EndsRun("succeeded"),
		},
		Edges: []sdk.Edge{sdk.Then("a", "c"), sdk.Then("b", "c"), sdk.Then("c", "fan"), sdk.Then("fan", "loop"), sdk.Then("loop", "done")},
	}
}

const sdkEveryFieldYAML = `key: sdk-every-field
triggers:
  - schedule: {id: nightly, cron: "0 2 * * *", timezone: America/New_York, input: {format: pdf}, overlap: buffer_one,
               catchup_window: 2h, jitter: 1m, start_at: "2030-01-01T00:00:00Z", end_at: "2031-01-01T00:00:00Z", pause_on_failure: true}
  - schedule: {id: hourly, interval: 1h, offset: 5m, paused: true}
  - {event: order.placed, filter_expr: 'event.total > 100.0', input_expr: '{"order": event.id}'}
  - {event: order.updated}
concurrency:
  - {key_expr: input.customer, limit: 2}
  - {limit: 'input.tier == "premium" ? 10 : 1', strategy: cancel_newest}
rate_limit: {key_expr: input.customer, limit: 10, period: 1m}
throttle: {limit: 5, period: 1s}
debounce: {key_expr: input.customer, period: 10s, max_wait: 1m}
steps:
  - {ref: a, type: task, with: {handler: builtin.echo}, concurrency: {key_expr: '"vendor"', limit: 3}}
  - {ref: b, type: transform, with: {expr: "1"}}
  - {ref: c, type: transform, with: {expr: "2"}, join: {at_least: 1, cancel_rest: true}}
  - ref: fan
    type: scatter
    with:
      items_expr: '[1, 2, 3]'
      complete_when: 'succeeded >= 2'
      do: {type: task, with: {handler: builtin.echo}, concurrency: {key_expr: '"vendor"', limit: '1 + 1'}}
  - {ref: loop, type: subworkflow, with: {workflow: child, input_expr: '{"page": 1}',
     repeat: {until_expr: '!output.more', input_expr: '{"page": output.page + 1}', max_iterations: 5}}}
  - {ref: done, type: transform, with: {expr: "3"}, end_run: succeeded}
edges:
  - {from: a, to: c}
  - {from: b, to: c}
  - {from: c, to: fan}
  - {from: fan, to: loop}
  - {from: loop, to: done}
`

const sdkEveryStepYAML = `key: sdk-every-step
name: Every step
timeout: 72h
input_schema: {type: object}
limits: {max_inline_children: 100}
steps:
  - {ref: task, type: task, name: Echo, with: {handler: builtin.echo, input_expr: input, schedule_to_start: 10m}, timeout: 90s,
     retry: {max_attempts: 5, initial_interval: 500ms, backoff_coefficient: 1.5, max_interval: 1m, jitter: false}}
  - {ref: http, type: http, with: {url: "https://api.example.com/orders", method: POST, headers: {X-A: b}, body: {a: 1}, expect_status: [200, 201]}}
  - {ref: transform, type: transform, with: {expr: '{"n": 1}'}, run_if: "true"}
  - {ref: condition, type: condition, with: {expr: input.size() > 0}}
  - ref: scatter
    type: scatter
    with:
      items_expr: '[1, 2]'
      key_expr: string(item)
      concurrency: 2
      interval_ms: 5
      max_inline_children: 10
      do: {type: http, with: {url_expr: '"https://x.test/" + string(item)'}, timeout: 1s}
  - {ref: gather, type: gather, with: {scatter_ref: scatter, strategy: include}}
  - {ref: children, type: scatter, with: {items_expr: '[1]', mode: child_workflow, workflow: child, version: 2, input_expr: item}}
  - {ref: sub, type: subworkflow, with: {workflow: child, wait_for: "checkpoint:ready", timeout: 1h, on_timeout: detach}}
  - {ref: async, type: subworkflow, with: {workflow: child, mode: async}}
  - {ref: checkpoint, type: checkpoint, with: {name: ready, output_expr: '{"ok": true}'}}
  - {ref: wait, type: wait, with: {duration: PT90S}}
  - {ref: until, type: wait, with: {until: "2030-01-02T03:04:05Z"}}
  - {ref: cron, type: wait, with: {cron: "0 2 * * *", timezone: Europe/Paris}}
  - {ref: signal, type: signal, with: {name: go, timeout: 1h, on_timeout: skip}}
  - {ref: event, type: event, with: {name: paid, match_expr: event.id == input.id, timeout: 1h}}
  - {ref: event_set, type: event_set, with: {events: [{name: a}, {name: b, match_expr: "true"}, {name: b, key: second-b}], policy: quorum, n: 1, timeout: 1h, on_timeout: succeed_partial}}
  - {ref: digest, type: digest, with: {name: signup, window: 10m, max_items: 50}}
  - {ref: approval, type: approval, with: {approvers: [a@example.com, "role:admin"], title: OK?, min_approvals: 2, timeout: 1h, on_timeout: approve}}
  - {ref: human_loop, type: human_loop, with: {title: Look, assignees: ["role:operator"], fields: {type: object}, awaiting_status: done, timeout: 24h}}
  - {ref: each, type: transform, with: {expr: item}, for_each: '[1, 2]', join: any, on_error: continue}
edges:
  - {from: task, to: http}
  - {from: condition, to: transform, on: "true"}
  - {from: approval, to: each, on: approved}
  - {from: approval, to: wait, on: done}
  - {from: scatter, to: gather}
  - from: checkpoint
    choice:
      - {when: input.x == 1, to: signal}
      - {default: true, to: event}
`
