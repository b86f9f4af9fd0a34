// everyStep is a definition with each of the fifteen builders: the Go
// SDK's own test definition (sdk/definition_test.go), built here. Its
// document is testdata/every-step.json, the JSON the Go SDK marshals.

import {
  type Definition, HOUR, MINUTE, SECOND, approvalStep, checkpointStep, choose, conditionStep, digestStep, eventSetStep,
  eventStep, gatherStep, httpStep, humanLoopStep, on, otherwise, scatterStep, signalStep, subworkflowStep, taskStep,
  then, transformStep, waitStep, when,
} from "../src/index.js";

export function everyStep(): Definition {
  return {
    key: "sdk-every-step", name: "Every step", timeout: 72 * HOUR,
    input_schema: { type: "object" },
    limits: { max_inline_children: 100 },
    steps: [
      taskStep("task", { handler: "builtin.echo", queue: "default", input_expr: "input", schedule_to_start: 10 * MINUTE })
        .withRetry({ max_attempts: 5, initial_interval: 500, backoff_coefficient: 1.5, max_interval: MINUTE, jitter: false })
        .withTimeout(90 * SECOND).named("Echo"),
      httpStep("http", { url: "https://api.example.com/orders", method: "post", headers: { "X-A": "b" }, body: { a: 1 }, expect_status: [200, 201] }),
      transformStep("transform", `{"n": 1}`).if("true"),
      conditionStep("condition", "input.size() > 0"),
      scatterStep("scatter", {
        items_expr: "[1, 2]", key_expr: "string(item)", concurrency: 2, interval_ms: 5, max_inline_children: 10,
        do: { type: "http", with: { url_expr: `"https://x.test/" + string(item)` }, timeout: SECOND },
      }),
      gatherStep("gather", "scatter", "include"),
      scatterStep("children", { items_expr: "[1]", mode: "child_workflow", workflow: "child", version: 2, input_expr: "item" }),
      subworkflowStep("sub", { workflow: "child", wait_for: "checkpoint:ready", timeout: HOUR, on_timeout: "detach" }),
      subworkflowStep("async", { workflow: "child", mode: "async" }),
      checkpointStep("checkpoint", "ready", `{"ok": true}`),
      waitStep("wait", { duration: 90 * SECOND }),
      waitStep("until", { until: new Date(Date.UTC(2030, 0, 2, 3, 4, 5)) }),
      waitStep("cron", { cron: "0 2 * * *", timezone: "Europe/Paris" }),
      signalStep("signal", { name: "go", timeout: HOUR, on_timeout: "skip" }),
      eventStep("event", { name: "paid", match_expr: "event.id == input.id", timeout: HOUR }),
      eventSetStep("event_set", {
        events: [{ name: "a" }, { name: "b", match_expr: "true" }, { name: "b", key: "second-b" }],
        policy: "quorum", n: 1, timeout: HOUR, on_timeout: "succeed_partial",
      }),
      digestStep("digest", { name: "signup", window: 10 * MINUTE, max_items: 50 }),
      approvalStep("approval", { approvers: ["a@example.com", "role:admin"], title: "OK?", min_approvals: 2, timeout: HOUR, on_timeout: "approve" }),
      humanLoopStep("human_loop", { title: "Look", assignees: ["role:operator"], fields: { type: "object" }, awaiting_status: "done", timeout: 24 * HOUR }),
      transformStep("each", "item").each("[1, 2]").joinAny().continueOnError(),
    ],
    edges: [
      then("task", "http"),
      on("condition", "transform", "true"),
      on("approval", "each", "approved"),
      on("approval", "wait", "done"),
      then("scatter", "gather"),
      choose("checkpoint", when("input.x == 1", "signal"), otherwise("event")),
    ],
  };
}
