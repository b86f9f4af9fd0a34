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
	doc, err := json.Marshal(sdkEveryStep())
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
	fromYAML, err := definition.Compile([]byte(sdkEveryStepYAML), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	if fromGo.Hash != fromYAML.Hash {
		t.Errorf("the SDK's document compiles differently from its YAML twin:\n%s\n%s", fromGo.JSON, fromYAML.JSON)
	}
}

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
