// A worker for the queue "ts": node worker.mjs, with DUCTOR_URL and
// DUCTOR_API_KEY set (DUCTOR_QUEUE names another queue).
import { Client, TaskError } from "ductor-sdk";

const client = new Client(); // DUCTOR_URL and DUCTOR_API_KEY
const queue = process.env.DUCTOR_QUEUE || "ts";
const worker = client.newWorker({ queue, concurrency: 4 });

worker.handle("greet", async (task, { signal }) => {
  const { name } = task.input;
  if (typeof name !== "string") {
    throw new TaskError("input.name must be a string", { code: "bad_input", retryable: false });
  }
  signal.throwIfAborted(); // pass signal on to fetch and the like
  return { greeting: `hello, ${name}`, by: `typescript worker ${worker.id}` };
});

for (const sig of ["SIGINT", "SIGTERM"]) process.once(sig, () => worker.stop());
console.log(`worker ${worker.id} serving queue ${queue}`);
await worker.run(); // until SIGINT or SIGTERM, then lets running tasks finish
