// Publishes a definition with a task on the queue "ts", starts a run of
// it and prints the run's output: node start.mjs NAME.
import { Client, taskStep } from "ductor-sdk";

const client = new Client();
const queue = process.env.DUCTOR_QUEUE || "ts";
const published = await client.publish({
  key: "greet-ts",
  steps: [
    taskStep("hello", { handler: "greet", queue, input_expr: `{"name": input.name}` })
      .withRetry({ max_attempts: 3 })
      .withTimeout(30_000),
  ],
});
const name = process.argv[2] ?? "ada";
const started = await client.startRun({
  definition: published.key,
  input: { name },
  idempotency_key: `greet-${name}`, // a repeat answers the same run
});
const run = await client.waitRun(started.id);
console.log(run.status, JSON.stringify(run.output));
