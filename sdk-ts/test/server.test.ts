// The SDK against a real server: DUCTOR_URL and DUCTOR_API_KEY name it
// (the Go test e2e/sdk_typescript_test.go starts one); without them these
// tests are skipped.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import ts from "typescript";

import {
  APIError, Client, type Definition, type Run, ReleasedError, TaskError, TaskLostError, approvalStep, conditionStep,
  eventStep, humanLoopStep, on, permanent, signalStep, taskStep, terminal, then, transformStep,
} from "../src/index.js";
import { everyStep } from "./every-step.js";

const live = Boolean(process.env.DUCTOR_URL && process.env.DUCTOR_API_KEY);
const testdata = new URL("../../testdata/", import.meta.url);
const quiet = { warn: () => {} };

/** A name no other test or earlier run of the suite uses. */
function unique(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** Polls the run until cond holds, for at most ms. */
async function waitFor(c: Client, id: string, cond: (r: Run) => boolean, ms = 20_000): Promise<Run> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await c.getRun(id);
    if (cond(r)) return r;
    if (Date.now() > until) assert.fail(`run ${id} is ${r.status} after ${ms} ms: ${JSON.stringify(r.nodes)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A task definition on its own queue. */
function oneTask(key: string, queue: string, handler: string, extra: (s: ReturnType<typeof taskStep>) => ReturnType<typeof taskStep> = (s) => s): Definition {
  return { key, steps: [extra(taskStep("work", { handler, queue, input_expr: "input" }))] };
}

describe("against a real server", { skip: live ? false : "DUCTOR_URL and DUCTOR_API_KEY are not set" }, () => {
  const c = live ? new Client() : (undefined as unknown as Client);

  test("the client covers every operation of the served OpenAPI document", async () => {
    const doc = (await c.openAPI()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const served = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId)).sort();
    assert.deepStrictEqual(Object.keys(operations).sort(), served);
    for (const [id, method] of Object.entries(operations)) {
      const [owner, name] = method.startsWith("triggers.") ? [c.triggers, method.slice(9)] : [c, method];
      assert.equal(typeof (owner as unknown as Record<string, unknown>)[name], "function", `${id}: ${method} is not a method`);
    }
  });

  test("every type tagged @schema has exactly its schema's properties", async () => {
    const doc = (await c.openAPI()) as { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };
    const tagged = schemaTaggedProperties();
    assert.ok(tagged.size >= 25, `only ${tagged.size} tagged types`);
    for (const [name, [schema, props]] of tagged) {
      const want = Object.keys(doc.components.schemas[schema]?.properties ?? {}).sort();
      assert.ok(want.length > 0, `${name}: the document has no schema ${schema}`);
      assert.deepStrictEqual(props, want, `${name} drifted from the schema ${schema}`);
    }
  });

  test("the every-step document compiles as its YAML twin and publishes", async () => {
    const golden = readFileSync(new URL("every-step.json", testdata), "utf8");
    const yaml = readFileSync(new URL("every-step.yaml", testdata), "utf8");
    const fromValues = await c.compile(everyStep());
    const fromFile = await c.compile(golden);
    const fromYAML = await c.compile(yaml, "application/yaml");
    assert.equal(fromValues.manifest_hash, fromYAML.manifest_hash);
    assert.equal(fromFile.manifest_hash, fromYAML.manifest_hash);
    await c.publish({ key: "child", steps: [checkpointless()] });
    const v = await c.publish(everyStep());
    assert.equal(v.manifest_hash, fromYAML.manifest_hash);
    const again = await c.publish(everyStep());
    assert.deepStrictEqual([again.version, again.created], [v.version, false]);
    assert.deepStrictEqual((await c.getVersion("sdk-every-step", v.version)).manifest_hash, v.manifest_hash);
  });

  test("a run started twice with one idempotency key is one run; a 404 and a 422 are typed errors", async () => {
    const key = unique("ts-branch");
    const v = await c.publish({
      key,
      steps: [conditionStep("big", "input.amount > 500"), transformStep("large", `"large"`), transformStep("small", `"small"`)],
      edges: [on("big", "large", "true"), on("big", "small", "false")],
    });
    assert.deepStrictEqual([v.key, v.version, v.created], [key, 1, true]);
    const idem = unique("order");
    const first = await c.startRun({ definition: key, input: { amount: 900 }, idempotency_key: idem });
    const second = await c.startRun({ definition: key, input: { amount: 900 }, idempotency_key: idem });
    assert.deepStrictEqual([second.id, first.existing, second.existing], [first.id, false, true]);
    const run = await c.waitRun(first.id, 50);
    assert.equal(run.status, "succeeded");
    assert.deepStrictEqual(run.output, { large: "large" });
    assert.equal(run.nodes?.find((n) => n.node === "small")?.state, "skipped");

    const page = await c.listRuns({ definition: key, limit: 1 });
    assert.deepStrictEqual(page.runs.map((r) => r.id), [first.id]);

    await assert.rejects(c.getRun(randomUUID()), (err: unknown) => err instanceof APIError && err.status === 404 && err.code === "not_found");
    await assert.rejects(c.publish({ key: unique("ts-bad"), steps: [transformStep("a", "1"), transformStep("a", "2")] }), (err: unknown) => {
      assert.ok(err instanceof APIError, String(err));
      assert.deepStrictEqual([err.status, err.code], [422, "invalid_definition"]);
      assert.ok(Array.isArray(err.details) && err.details.length > 0, JSON.stringify(err.details));
      return true;
    });
  });

  test("the client wakes runs by signal, event, approval and case, retries a failed node and pages runs", async () => {
    const me = await c.whoami();
    const key = unique("ts-wake");
    await c.publish({
      key,
      steps: [
        signalStep("gate", { name: "go" }),
        eventStep("paid", { name: `${key}.paid`, match_expr: "event.order == input.order" }),
        approvalStep("ok", { approvers: [`key:${me.key_name}`], title: "Ship it?" }),
        humanLoopStep("pack", { title: "Pack it" }),
      ],
      edges: [then("gate", "paid"), then("paid", "ok"), on("ok", "pack", "approved")],
    });
    const run = await c.startRun({ definition: key, input: { order: 7 } });
    const waiting = (node: string) => (r: Run) => r.nodes?.some((n) => n.node === node && n.state === "waiting") ?? false;

    await waitFor(c, run.id, waiting("gate"));
    await c.signal(run.id, "go-1", "go", { by: "ops" });
    await assert.rejects(c.signal(run.id, "go-1", "go"), (err: unknown) => err instanceof APIError && err.status === 409);
    await waitFor(c, run.id, waiting("paid"));
    assert.ok(await c.publishEvent({ name: `${key}.paid`, data: { order: 7 }, idempotency_key: `${key}-7` }));
    await waitFor(c, run.id, waiting("ok"));
    const approval = (await c.listApprovals("pending")).find((a) => a.run_id === run.id);
    assert.ok(approval, "no pending approval for the run");
    assert.equal((await c.decideApproval(approval.id, true, "fine")).status, "approved");
    await waitFor(c, run.id, waiting("pack"));
    const kase = (await c.listCases()).find((k) => k.run_id === run.id);
    assert.ok(kase, "no case for the run");
    assert.equal((await c.updateCase(kase.id, { status: "working", data: { box: "small" } })).status, "working");
    assert.deepStrictEqual((await c.getCase(kase.id)).data, { box: "small" });
    await c.updateCase(kase.id, { status: "resolved" });
    const done = await waitFor(c, run.id, (r) => terminal(r.status));
    assert.equal(done.status, "succeeded", JSON.stringify(done.nodes));

    const queue = unique("ts-retry");
    const w = c.newWorker({ queue, pollWaitMs: 1000, logger: quiet });
    let calls = 0;
    w.handle("once-broken", () => {
      if (++calls === 1) throw permanent(new Error("broken the first time"));
      return { calls };
    });
    const working = w.run();
    try {
      await c.publish(oneTask(queue, queue, "once-broken"));
      const older = await c.startRun({ definition: queue });
      const failed = await waitFor(c, older.id, (r) => r.status === "failed");
      assert.equal(failed.nodes?.[0]?.error?.message, "broken the first time");
      await c.retryNode(older.id, "work");
      assert.deepStrictEqual((await waitFor(c, older.id, (r) => r.status === "succeeded")).output, { work: { calls: 2 } });
      const newer = await c.startRun({ definition: queue });
      await waitFor(c, newer.id, (r) => r.status === "succeeded");
      const first = await c.listRuns({ definition: queue, limit: 1 });
      assert.deepStrictEqual(first.runs.map((r) => r.id), [newer.id]);
      assert.ok(first.next_cursor, "a first page of one of two runs has no next cursor");
      const second = await c.listRuns({ definition: queue, limit: 1, cursor: first.next_cursor });
      assert.deepStrictEqual(second.runs.map((r) => r.id), [older.id]);
    } finally {
      w.stop();
      await working;
    }
  });

  test("a worker completes a task, a thrown error is retried and a TaskError fails the step as it says", async () => {
    const queue = unique("ts-q");
    const w = c.newWorker({ queue, concurrency: 4, pollWaitMs: 1000, logger: quiet });
    const keys: string[] = [];
    w.handle("flaky", (task) => {
      keys.push(task.idempotency_key);
      if (task.attempt === 1) throw new Error("first attempts fail");
      return { attempt: task.attempt, input: task.input };
    });
    w.handle("refuse", () => {
      throw new TaskError("card declined", { code: "declined", retryable: false });
    });
    const running = w.run();
    try {
      const retry = { max_attempts: 3, initial_interval: 50 };
      await c.publish(oneTask(`${queue}-flaky`, queue, "flaky", (s) => s.withRetry(retry)));
      await c.publish(oneTask(`${queue}-refuse`, queue, "refuse", (s) => s.withRetry(retry)));
      const flaky = await c.startRun({ definition: `${queue}-flaky`, input: { n: 1 } });
      const refused = await c.startRun({ definition: `${queue}-refuse` });
      const ok = await waitFor(c, flaky.id, (r) => r.status === "succeeded");
      assert.deepStrictEqual(ok.output, { work: { attempt: 2, input: { n: 1 } } });
      assert.deepStrictEqual(keys, [`${flaky.id}:work`, `${flaky.id}:work`]);
      const failed = await waitFor(c, refused.id, (r) => r.status === "failed");
      const node = failed.nodes?.find((n) => n.node === "work");
      assert.deepStrictEqual([node?.attempt, node?.error?.code, node?.error?.message], [1, "declined", "card declined"]);
    } finally {
      w.stop();
      await running;
    }
  });

  // All four runs wait before the worker polls: a poll may claim them all
  // (more than the max it asks for), and the extra ones wait for a slot.
  test("a worker runs at most its concurrency of tasks at once", async () => {
    const queue = unique("ts-conc");
    await c.publish(oneTask(queue, queue, "gate"));
    const runs = await Promise.all([1, 2, 3, 4].map((n) => c.startRun({ definition: queue, input: { n } })));
    const w = c.newWorker({ queue, concurrency: 2, pollWaitMs: 1000, logger: quiet });
    let active = 0;
    let peak = 0;
    let full!: () => void;
    const twoRunning = new Promise<void>((r) => (full = r));
    w.handle("gate", async (task) => {
      peak = Math.max(peak, ++active);
      if (active === 2) full();
      await twoRunning; // the first two wait for each other
      active--;
      return task.input;
    });
    const running = w.run();
    try {
      for (const r of runs) assert.equal((await waitFor(c, r.id, (x) => x.status === "succeeded")).status, "succeeded");
      assert.equal(peak, 2);
    } finally {
      w.stop();
      await running;
    }
  });

  test("cancelling a run aborts its handler's signal within the heartbeat interval", async () => {
    const queue = unique("ts-cancel");
    const heartbeatMs = 1000; // long against a loaded machine's scheduling, so the bound below measures the heartbeat
    const w = c.newWorker({ queue, heartbeatMs, pollWaitMs: 1000, logger: quiet });
    let started!: () => void;
    const handlerStarted = new Promise<void>((r) => (started = r));
    let aborted!: (reason: unknown) => void;
    const handlerAborted = new Promise<unknown>((r) => (aborted = r));
    w.handle("hold", (_task, { signal }) => {
      started();
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => { aborted(signal.reason); reject(signal.reason); }));
    });
    const running = w.run();
    try {
      await c.publish(oneTask(queue, queue, "hold"));
      const run = await c.startRun({ definition: queue });
      await handlerStarted;
      const cancelledAt = performance.now();
      await c.cancelRun(run.id, "not needed");
      const reason = await handlerAborted;
      const took = performance.now() - cancelledAt;
      assert.ok(reason instanceof TaskLostError, String(reason));
      assert.ok(took <= 2 * heartbeatMs, `the signal aborted ${Math.round(took)} ms after the cancel, heartbeat every ${heartbeatMs} ms`);
      assert.equal((await waitFor(c, run.id, (r) => r.status === "cancelled")).status, "cancelled");
    } finally {
      w.stop();
      await running;
    }
  });

  test("a worker that stops hands its running task back, and another finishes it", async () => {
    const queue = unique("ts-drain");
    const first = c.newWorker({ queue, drainTimeoutMs: 200, pollWaitMs: 1000, logger: quiet });
    let started!: () => void;
    const handlerStarted = new Promise<void>((r) => (started = r));
    let reason: unknown;
    first.handle("job", (_task, { signal }) => {
      started();
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => { reason = signal.reason; reject(signal.reason); }));
    });
    const firstRun = first.run();
    await c.publish(oneTask(queue, queue, "job", (s) => s.withRetry({ max_attempts: 2, initial_interval: 50 })));
    const run = await c.startRun({ definition: queue });
    await handlerStarted;
    first.stop();
    await firstRun;
    assert.ok(reason instanceof ReleasedError, String(reason));

    const second = c.newWorker({ queue, pollWaitMs: 1000, logger: quiet });
    second.handle("job", (task) => ({ attempt: task.attempt }));
    const secondRun = second.run();
    try {
      const done = await waitFor(c, run.id, (r) => r.status === "succeeded");
      assert.deepStrictEqual(done.output, { work: { attempt: 2 } });
    } finally {
      second.stop();
      await secondRun;
    }
  });

  test("a killed worker process's task is retried and finished by another process", async () => {
    const queue = unique("ts-kill");
    await c.publish(oneTask(queue, queue, "slow", (s) => s.withTimeout(2000).withRetry({ max_attempts: 3, initial_interval: 50 })));
    const a = workerProcess(queue);
    const run = await c.startRun({ definition: queue });
    await a.printed("started 1");
    a.child.kill("SIGKILL");
    await a.exited;
    const b = workerProcess(queue);
    try {
      const done = await waitFor(c, run.id, (r) => r.status === "succeeded", 30_000);
      assert.deepStrictEqual(done.output, { work: { attempt: 2, pid: b.child.pid } });
    } finally {
      b.child.kill("SIGTERM");
      await b.exited;
    }
  });
});

/** A child definition the every-step document's subworkflows can start. */
function checkpointless() {
  return transformStep("done", "true");
}

/** Runs test/fixtures/slow-worker as a separate process. */
function workerProcess(queue: string): { child: ChildProcess; printed: (line: string) => Promise<void>; exited: Promise<void> } {
  const script = fileURLToPath(new URL("./fixtures/slow-worker.js", import.meta.url));
  const child = spawn(process.execPath, [script], { env: { ...process.env, DUCTOR_QUEUE: queue }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const waiters: [string, () => void][] = [];
  child.stdout!.on("data", (b: Buffer) => {
    out += b.toString();
    for (const [line, resolve] of waiters) if (out.includes(line)) resolve();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const printed = (line: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (out.includes(line)) return resolve();
      waiters.push([line, resolve]);
      setTimeout(() => reject(new Error(`the worker process did not print ${JSON.stringify(line)} in 20 s:\n${out}`)), 20_000).unref();
    });
  return { child, printed, exited };
}

/** Each operation of the API by its operationId, and the client method that calls it. */
const operations: Record<string, string> = {
  getOpenAPI: "openAPI", getDefinitionSchema: "definitionSchema", whoami: "whoami",
  startRun: "startRun", listRuns: "listRuns", createBatch: "createBatch", getRun: "getRun", getRunHistory: "runHistory",
  listScatterChildren: "scatterChildren", cancelRun: "cancelRun", retryNode: "retryNode", cancelNode: "cancelNode",
  continueAsNew: "continueAsNew", signalRun: "signal", getBatch: "getBatch", stopBatch: "stopBatch", publishEvent: "publishEvent",
  listApprovals: "listApprovals", getApproval: "getApproval", decideApproval: "decideApproval",
  listCases: "listCases", getCase: "getCase", updateCase: "updateCase", compile: "compile",
  listDefinitions: "listDefinitions", getDefinition: "getDefinition", saveDraft: "saveDraft", publish: "publish",
  getVersion: "getVersion", unpublishVersion: "unpublish",
  pollTasks: "pollTasks", completeTask: "completeTask", failTask: "failTask", heartbeatTask: "heartbeatTask",
  createSchedule: "triggers.createSchedule", listSchedules: "triggers.listSchedules", getSchedule: "triggers.getSchedule",
  updateSchedule: "triggers.updateSchedule", deleteSchedule: "triggers.deleteSchedule", triggerSchedule: "triggers.triggerSchedule",
  backfillSchedule: "triggers.backfillSchedule", createWebhook: "triggers.createWebhook", listWebhooks: "triggers.listWebhooks",
  getWebhook: "triggers.getWebhook", deleteWebhook: "triggers.deleteWebhook", rotateWebhook: "triggers.rotateWebhook",
  listWebhookDeliveries: "triggers.webhookDeliveries",
  upgradeRun: "upgradeRun", retryRun: "retryRun",
  putSecret: "putSecret", listSecrets: "listSecrets", getSecret: "getSecret", deleteSecret: "deleteSecret",
  getUsage: "getUsage",
  createSubscription: "createSubscription", listSubscriptions: "listSubscriptions", getSubscription: "getSubscription",
  deleteSubscription: "deleteSubscription", rotateSubscription: "rotateSubscription", enableSubscription: "enableSubscription",
  listSubscriptionDeliveries: "listSubscriptionDeliveries", redeliverSubscriptionDelivery: "redeliver",
};

/** The interfaces of src/types.ts tagged @schema NAME: their schema and sorted property names, as the compiler resolves them. */
function schemaTaggedProperties(): Map<string, [string, string[]]> {
  const file = fileURLToPath(new URL("../../src/types.ts", import.meta.url));
  const program = ts.createProgram([file], { strict: true, types: [] });
  const checker = program.getTypeChecker();
  const out = new Map<string, [string, string[]]>();
  ts.forEachChild(program.getSourceFile(file)!, (node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    const tag = ts.getJSDocTags(node).find((t) => t.tagName.text === "schema");
    if (!tag || typeof tag.comment !== "string") return;
    const props = checker.getPropertiesOfType(checker.getTypeAtLocation(node.name)).map((p) => p.name).sort();
    out.set(node.name.text, [tag.comment.trim(), props]);
  });
  return out;
}
