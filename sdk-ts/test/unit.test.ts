// The client and worker against a stand-in server: typed errors,
// Retry-After, failure codes. The real server is in server.test.ts.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import { APIError, Backoff, Client, DeadlineError, ReleasedError, TaskError, failure, isStatus, permanent } from "../src/index.js";

async function standIn(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; close: () => void }> {
  const srv = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => handler(req, res, body));
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => srv.close() };
}

test("the client refuses a URL that is not http(s) and a key that is not Ductor's", () => {
  for (const [url, apiKey] of [["127.0.0.1:8080", "dk_x"], ["ftp://h", "dk_x"], ["http://h", ""], ["http://h", "secret"], ["http://h", "dk_a b"]]) {
    assert.throws(() => new Client({ url, apiKey }), /ductor:/, `${url} ${apiKey}`);
  }
  assert.equal(new Client({ url: "http://h:1/", apiKey: "dk_x" }).baseURL, "http://h:1");
});

test("an error answer is an APIError with the status, code, message, details and Retry-After", async (t) => {
  const s = await standIn((req, res) => {
    if (req.url === "/api/v1/runs/nope") {
      res.writeHead(404, { "Content-Type": "application/json" }).end(`{"error":{"code":"not_found","message":"run not found"}}`);
    } else if (req.url === "/api/v1/compile") {
      res.writeHead(422).end(`{"error":{"code":"invalid_definition","message":"bad","details":[{"path":"steps[0]","message":"x"}]}}`);
    } else {
      res.writeHead(503, { "Retry-After": "2" }).end("busy");
    }
  });
  t.after(s.close);
  const c = new Client({ url: s.url, apiKey: "dk_test" });
  await assert.rejects(c.getRun("nope"), (err: unknown) => {
    assert.ok(err instanceof APIError && isStatus(err, 404));
    assert.equal(err.code, "not_found");
    assert.equal(err.serverMessage, "run not found");
    return true;
  });
  await assert.rejects(c.compile({ key: "k", steps: [] }), (err: unknown) => {
    assert.ok(err instanceof APIError);
    assert.deepStrictEqual([err.status, err.code, err.details], [422, "invalid_definition", [{ path: "steps[0]", message: "x" }]]);
    return true;
  });
  await assert.rejects(c.whoami(), (err: unknown) => {
    assert.ok(err instanceof APIError);
    assert.deepStrictEqual([err.status, err.code, err.retryAfterMs], [503, "http_503", 2000]);
    return true;
  });
});

test("a worker backs off on 429 and 503 for at least the Retry-After asked", async (t) => {
  const polls: number[] = [];
  const s = await standIn((_req, res) => {
    polls.push(Date.now());
    if (polls.length === 1) res.writeHead(429, { "Retry-After": "1" }).end(`{"error":{"code":"rate_limited","message":"slow down"}}`);
    else res.writeHead(200).end(`{"tasks":[]}`);
  });
  t.after(s.close);
  const w = new Client({ url: s.url, apiKey: "dk_test" }).newWorker({ pollWaitMs: 10, logger: { warn: () => {} } });
  w.handle("h", () => null);
  const ran = w.run();
  while (polls.length < 2) await new Promise((r) => setTimeout(r, 20));
  w.stop();
  await ran;
  assert.ok(polls[1]! - polls[0]! >= 950, `second poll ${polls[1]! - polls[0]!} ms after a 429 asking for 1 s`);
  assert.ok(new Backoff(100, 1000).delay(new APIError(503, "unavailable", "", undefined, 5000)) >= 5000);
});

test("a worker with no handlers refuses to run", async () => {
  await assert.rejects(new Client({ url: "http://127.0.0.1:1", apiKey: "dk_x" }).newWorker().run(), /no handlers/);
});

test("a handler's error becomes a failure with its code and retryability", () => {
  assert.deepStrictEqual(failure(new Error("boom")), { code: "task_failed", message: "boom", retryable: true });
  assert.deepStrictEqual(failure(new TaskError("card declined", { code: "declined", retryable: false })), { code: "declined", message: "card declined", retryable: false });
  assert.deepStrictEqual(failure(permanent(new Error("bad input"))), { code: "task_failed", message: "bad input", retryable: false });
  assert.deepStrictEqual(failure(new Error("aborted"), new ReleasedError()), { code: "worker_stopped", message: "aborted", retryable: true });
  assert.deepStrictEqual(failure(new DeadlineError()), { code: "timeout", message: "ductor: the task's deadline passed", retryable: true });
  assert.deepStrictEqual(failure("a string"), { code: "task_failed", message: "a string", retryable: true });
  assert.equal(Buffer.byteLength(failure(new Error("x".repeat(10_000))).message), 4096);
});

test("the package has no runtime dependencies", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  for (const field of ["dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies", "bundledDependencies"]) {
    assert.equal(pkg[field], undefined, `package.json has ${field}`);
  }
  assert.deepStrictEqual(Object.keys(pkg.devDependencies).sort(), ["@types/node", "typescript"]);
  const lock = JSON.parse(readFileSync(new URL("../../package-lock.json", import.meta.url), "utf8"));
  for (const [path, entry] of Object.entries<{ dev?: boolean }>(lock.packages)) {
    if (path !== "") assert.ok(entry.dev, `${path} is installed for more than development`);
  }
  assert.equal(pkg.type, "module");
  assert.match(pkg.engines.node, />=20/);
});

test("the quick start on docs/sdk-typescript.md is the example files CI runs", () => {
  const repo = new URL("../../../", import.meta.url);
  const doc = readFileSync(new URL("docs/sdk-typescript.md", repo), "utf8");
  const blocks = [...doc.matchAll(/<!-- (sdk-ts\/examples\/[\w.-]+) -->\n```js\n([\s\S]*?)```\n/g)];
  assert.deepStrictEqual(blocks.map((m) => m[1]), ["sdk-ts/examples/worker.mjs", "sdk-ts/examples/start.mjs"]);
  for (const [, file, body] of blocks) assert.equal(body, readFileSync(new URL(file!, repo), "utf8"), `${file} and its block on the page differ`);
});

test("a worker gives its handler the task's secrets and completes with its output", async (t) => {
  const sent: { path: string; body: unknown }[] = [];
  let polls = 0;
  const task = {
    id: "t1", token: "tok", handler: "h", queue: "default", input: { a: 1 }, attempt: 1, idempotency_key: "r:n",
    deadline: null, lease_until: null, deadline_ms: null, lease_ms: 30_000, run_id: "r", node: "n", secrets: { API_KEY: "s3cret", n: 5 },
  };
  const s = await standIn((req, res, body) => {
    if (req.url === "/api/v1/tasks/poll") {
      polls++;
      res.writeHead(200).end(JSON.stringify({ tasks: polls === 1 ? [task] : [] }));
      return;
    }
    sent.push({ path: req.url!, body: JSON.parse(body) });
    res.writeHead(200).end("{}");
  });
  t.after(s.close);
  const w = new Client({ url: s.url, apiKey: "dk_test" }).newWorker({ pollWaitMs: 10, logger: { warn: () => {} } });
  let seen: unknown;
  w.handle("h", (got, { secrets }) => {
    seen = { ...secrets };
    return { echoed: got.input };
  });
  const ran = w.run();
  while (sent.length === 0) await new Promise((r) => setTimeout(r, 10));
  w.stop();
  await ran;
  assert.deepStrictEqual(seen, { API_KEY: "s3cret" }); // only string values
  assert.deepStrictEqual(sent, [{ path: "/api/v1/tasks/t1/complete", body: { token: "tok", output: { echoed: { a: 1 } } } }]);
});

test("a worker that stops lets a running handler finish", async (t) => {
  const sent: string[] = [];
  let polls = 0;
  const task = { id: "t2", token: "tok", handler: "h", queue: "default", input: null, attempt: 1, idempotency_key: "r:n", deadline: null, lease_until: null, deadline_ms: null, lease_ms: 30_000, run_id: "r", node: "n" };
  const s = await standIn((req, res) => {
    if (req.url === "/api/v1/tasks/poll") {
      polls++;
      res.writeHead(200).end(JSON.stringify({ tasks: polls === 1 ? [task] : [] }));
      return;
    }
    sent.push(req.url!);
    res.writeHead(200).end("{}");
  });
  t.after(s.close);
  const w = new Client({ url: s.url, apiKey: "dk_test" }).newWorker({ pollWaitMs: 10, logger: { warn: () => {} } });
  let finish!: () => void;
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  w.handle("h", () => {
    started();
    return new Promise((r) => (finish = () => r("finished")));
  });
  const ran = w.run();
  await running;
  w.stop();
  assert.equal(w.running, 1);
  finish();
  await ran;
  assert.deepStrictEqual(sent, ["/api/v1/tasks/t2/complete"]);
});
