import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { definitionDocument, durationString, HOUR, newStep, SECOND, taskStep, validateDefinition } from "../src/index.js";
import { everyStep } from "./every-step.js";

const testdata = new URL("../../testdata/", import.meta.url);

test("a definition built with every builder is the Go SDK's document", () => {
  const want = JSON.parse(readFileSync(new URL("every-step.json", testdata), "utf8"));
  const got = JSON.parse(JSON.stringify(definitionDocument(everyStep())));
  assert.deepStrictEqual(got, want);
});

test("durations are spelled as Go spells them", () => {
  const cases: [number | string, string | undefined][] = [
    [0, undefined], [500, "500ms"], [1.5, "1.5ms"], [SECOND, "1s"], [1500, "1.5s"], [90 * SECOND, "1m30s"],
    [HOUR, "1h0m0s"], [72 * HOUR, "72h0m0s"], [HOUR + 1500, "1h0m1.5s"], ["PT90S", "PT90S"],
  ];
  for (const [d, want] of cases) assert.equal(durationString(d), want, `durationString(${d})`);
  assert.throws(() => durationString(-1), RangeError);
});

test("steps are values: each method returns a new step", () => {
  const base = taskStep("charge", { handler: "payments.charge" });
  const retried = base.withRetry({ max_attempts: 2 }).set("queue", "ts");
  assert.deepStrictEqual(base.toJSON(), { ref: "charge", type: "task", with: { handler: "payments.charge" } });
  assert.deepStrictEqual(retried.toJSON(), {
    ref: "charge", type: "task", with: { handler: "payments.charge", queue: "ts" }, retry: { max_attempts: 2 },
  });
  assert.deepStrictEqual(newStep("x", "transform", { expr: "1" }).toJSON(), { ref: "x", type: "transform", with: { expr: "1" } });
});

test("validateDefinition catches what the SDK can see", () => {
  assert.throws(() => validateDefinition({ key: "", steps: [] }), /no key/);
  assert.throws(() => validateDefinition({ key: "k", steps: [] }), /no steps/);
  validateDefinition({ key: "k", steps: [taskStep("a", { handler: "h" })] });
});
