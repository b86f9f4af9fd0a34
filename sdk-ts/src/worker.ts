// Worker long-polls the server for tasks of its queue and registered
// handlers and runs them: up to concurrency at once, each under
// heartbeats, each completed with its JSON result or failed with
// {code, message, retryable}. A handler's AbortSignal fires when the
// server no longer wants its task (cancelled, or its lease lost), at its
// deadline, and when the worker hands it back at shutdown.

import { hostname } from "node:os";
import { performance } from "node:perf_hooks";

import { type Client, sleep } from "./client.js";
import { DeadlineError, ReleasedError, TaskError, TaskLostError, isStatus, retryable } from "./errors.js";
import type { Task } from "./types.js";

/** What a handler gets beside its task. */
export interface TaskContext {
  /**
   * Aborts when the task is no longer wanted (reason: TaskLostError), at
   * its deadline (DeadlineError), and when the worker shuts down and hands
   * the task back (ReleasedError). Pass it to fetch and other calls.
   */
  signal: AbortSignal;
  /**
   * The values of the tenant secrets the task's step declares, by name
   * (the claimed task's `secrets`); empty when it declares none.
   */
  secrets: Readonly<Record<string, string>>;
}

/**
 * Runs one attempt of a task. What it returns (or resolves to) must be
 * JSON and becomes the step's output; what it throws fails the attempt:
 * a {@link TaskError} with its code and retryability, anything else as a
 * retryable `task_failed` with its message.
 */
export type Handler = (task: Task, ctx: TaskContext) => unknown;

/** Receives the worker's problems. */
export interface Logger {
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** Configures a {@link Worker}; left-out fields take their defaults. */
export interface WorkerOptions {
  /** The queue this worker serves (default "default"). */
  queue?: string;
  /** Names the worker in the server's records (default host:pid). */
  id?: string;
  /** The most tasks run at once (default 10). */
  concurrency?: number;
  /** How long one poll waits for tasks, in ms (default 20 000; the server caps it at 30 000). */
  pollWaitMs?: number;
  /** How often a running task's lease is extended, in ms (default a third of the lease the server granted, at most 10 000). */
  heartbeatMs?: number;
  /** How long running tasks may go on after stop, in ms; then their signals abort and they are handed back to be retried (default 30 000). */
  drainTimeoutMs?: number;
  /** The least and most wait between attempts to reach an unavailable server, in ms (defaults 100 and 10 000); a Retry-After answer waits at least as asked. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Default: console. */
  logger?: Logger;
}

/** The largest output a step takes, as JSON bytes; a larger one fails the step as payload_too_large (not retried). */
export const MAX_OUTPUT_BYTES = 1 << 20;

/** The longest failure message the server takes, in bytes. */
const MAX_MESSAGE_BYTES = 4096;

/** The least time a result is offered for: a slow answer from a loaded server is no reason to drop it. */
const MIN_REPORT_MS = 10_000;

interface Running {
  abort: AbortController;
  done: Promise<void>;
}

interface Failure {
  code: string;
  message: string;
  retryable: boolean;
}

/** Runs the tasks of one queue with the handlers registered on it. Register handlers with handle, then call run. */
export class Worker {
  readonly #c: Client;
  readonly #opts: Required<WorkerOptions>;
  readonly #handlers = new Map<string, Handler>();
  readonly #running = new Map<string, Running>();
  readonly #stop = new AbortController();
  #slotFreed: (() => void) | undefined;
  readonly #slots: Slots;

  constructor(c: Client, opts: WorkerOptions = {}) {
    this.#c = c;
    const min = opts.minBackoffMs && opts.minBackoffMs > 0 ? opts.minBackoffMs : 100;
    this.#opts = {
      queue: opts.queue || "default",
      id: opts.id || `${hostname()}:${process.pid}`,
      concurrency: opts.concurrency && opts.concurrency > 0 ? opts.concurrency : 10,
      pollWaitMs: opts.pollWaitMs && opts.pollWaitMs > 0 ? opts.pollWaitMs : 20_000,
      heartbeatMs: opts.heartbeatMs ?? 0,
      drainTimeoutMs: opts.drainTimeoutMs && opts.drainTimeoutMs > 0 ? opts.drainTimeoutMs : 30_000,
      minBackoffMs: min,
      maxBackoffMs: opts.maxBackoffMs && opts.maxBackoffMs >= min ? opts.maxBackoffMs : Math.max(10_000, min),
      logger: opts.logger ?? { warn: (m, f) => console.warn(m, f ?? "") },
    };
    this.#slots = new Slots(this.#opts.concurrency);
    this.#stop.signal.addEventListener("abort", () => this.#slotFreed?.(), { once: true });
  }

  /** The worker's name in the server's records. */
  get id(): string {
    return this.#opts.id;
  }

  /** Registers h under a handler name, replacing any earlier one; polled for from the next poll. */
  handle(name: string, h: Handler): this {
    this.#handlers.set(name, h);
    return this;
  }

  /** How many tasks are running. */
  get running(): number {
    return this.#running.size;
  }

  /**
   * Polls for tasks and runs them until stop is called (or signal aborts),
   * then waits for running tasks: up to drainTimeoutMs, after which their
   * signals abort and unfinished ones are handed back to be retried. It
   * resolves after a shutdown, and rejects with the error that makes
   * polling pointless (a refused key, a malformed request). An unreachable
   * or failing server is retried with backoff.
   */
  async run(signal?: AbortSignal): Promise<void> {
    if (this.#handlers.size === 0) throw new Error("ductor: worker has no handlers");
    if (signal?.aborted) this.stop();
    signal?.addEventListener("abort", () => this.stop(), { once: true });
    try {
      await this.#pollLoop();
    } finally {
      await this.#drain();
    }
  }

  /** Stops polling; run resolves once running tasks have finished or been handed back. */
  stop(): void {
    this.#stop.abort(new ReleasedError());
  }

  async #pollLoop(): Promise<void> {
    const backoff = new Backoff(this.#opts.minBackoffMs, this.#opts.maxBackoffMs);
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      const free = await this.#waitForSlot();
      if (stop.aborted) return;
      let tasks: Task[];
      try {
        tasks = await this.#c.pollTasks(
          { queue: this.#opts.queue, handlers: [...this.#handlers.keys()].sort(), worker_id: this.#opts.id, max: free, wait_ms: this.#opts.pollWaitMs },
          { signal: stop },
        );
      } catch (err) {
        if (stop.aborted) return;
        if (!retryable(err)) throw err;
        this.#opts.logger.warn("ductor worker: poll failed, retrying", { err: String(err) });
        if (!(await pause(backoff.delay(err), stop))) return;
        continue;
      }
      backoff.reset();
      const received = performance.now();
      for (const t of tasks) this.#start(t, received);
    }
  }

  /**
   * Waits until fewer tasks than concurrency are held (or the worker
   * stops) and answers how many more to claim. A server may answer a poll
   * with more tasks than asked: those wait for a handler slot (#slots),
   * under heartbeats, and no poll is made until they have run.
   */
  async #waitForSlot(): Promise<number> {
    while (this.#running.size >= this.#opts.concurrency && !this.#stop.signal.aborted) {
      await new Promise<void>((resolve) => { this.#slotFreed = resolve; });
    }
    return Math.max(this.#opts.concurrency - this.#running.size, 1);
  }

  #start(t: Task, received: number): void {
    const abort = new AbortController();
    const done = this.#execute(t, received, abort)
      .catch((err) => this.#opts.logger.warn("ductor worker: task failed to run", { task: t.id, err: String(err) }))
      .finally(() => {
        this.#running.delete(t.id);
        this.#slotFreed?.();
      });
    this.#running.set(t.id, { abort, done });
  }

  /** Waits for running tasks, handing them back after drainTimeoutMs. */
  async #drain(): Promise<void> {
    if (this.#running.size === 0) return;
    const all = Promise.allSettled([...this.#running.values()].map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), this.#opts.drainTimeoutMs); });
    const timedOut = await Promise.race([all.then(() => false), late]);
    clearTimeout(timer);
    if (timedOut) {
      for (const r of this.#running.values()) r.abort.abort(new ReleasedError());
      await all;
    }
  }

  /** Runs one task: the handler under heartbeats, then its result. A handler that ignores its signal is abandoned once it aborts. */
  async #execute(t: Task, received: number, abort: AbortController): Promise<void> {
    const deadline = t.deadline_ms == null ? undefined
      : setTimeout(() => abort.abort(new DeadlineError()), Math.max(0, t.deadline_ms - (performance.now() - received)));
    const stopBeat = this.#heartbeat(t, abort);
    let out: unknown;
    let err: unknown;
    let failed = false;
    await this.#slots.acquire(); // the lease is kept while a task waits for a handler slot
    try {
      abort.signal.throwIfAborted();
      out = await this.#call(t, abort.signal);
    } catch (e) {
      err = e;
      failed = true;
    } finally {
      this.#slots.release();
      clearTimeout(deadline);
      stopBeat();
    }
    const cause: unknown = abort.signal.aborted ? abort.signal.reason : undefined;
    if (cause instanceof TaskLostError) return; // nobody wants the answer
    await this.#report(t, received, out, failed ? failure(err, cause) : undefined);
  }

  async #call(t: Task, signal: AbortSignal): Promise<unknown> {
    const h = this.#handlers.get(t.handler);
    if (!h) throw new TaskError(`no handler "${t.handler}" on worker ${this.#opts.id}`, { code: "unknown_handler", retryable: false });
    const ctx: TaskContext = { signal, secrets: secretsOf(t) };
    const result = Promise.resolve().then(() => h(t, ctx));
    return await new Promise((resolve, reject) => {
      const aborted = (): void => reject(signal.reason);
      if (signal.aborted) return aborted();
      signal.addEventListener("abort", aborted, { once: true });
      result.then(resolve, reject).finally(() => signal.removeEventListener("abort", aborted));
    });
  }

  /** Extends the task's lease until the returned function is called. A 409 or 404 means the task is no longer wanted: its signal aborts with TaskLostError. */
  #heartbeat(t: Task, abort: AbortController): () => void {
    const stopped = new AbortController();
    let inFlight = false;
    const beat = async (): Promise<void> => {
      if (inFlight) return;
      inFlight = true;
      try {
        await this.#c.heartbeatTask(t.id, t.token, { signal: stopped.signal });
      } catch (err) {
        if (isStatus(err, 409) || isStatus(err, 404)) {
          abort.abort(new TaskLostError());
        } else if (!stopped.signal.aborted) {
          this.#opts.logger.warn("ductor worker: heartbeat failed", { task: t.id, err: String(err) });
        }
      } finally {
        inFlight = false;
      }
    };
    const tick = setInterval(() => void beat(), this.#heartbeatMs(t));
    return () => {
      clearInterval(tick);
      stopped.abort();
    };
  }

  #heartbeatMs(t: Task): number {
    if (this.#opts.heartbeatMs > 0) return this.#opts.heartbeatMs;
    if (t.lease_ms == null) return 10_000;
    return Math.min(Math.max(t.lease_ms / 3, 50), 10_000);
  }

  /** Completes or fails the task, retrying while the server is unavailable and the task's lease may still hold. */
  async #report(t: Task, received: number, out: unknown, fail: Failure | undefined): Promise<void> {
    const output = out === undefined ? null : out;
    if (!fail) fail = outputProblem(output);
    const until = performance.now() + this.#reportMs(t, received);
    const backoff = new Backoff(this.#opts.minBackoffMs, this.#opts.maxBackoffMs);
    const verb = fail ? "fail" : "complete";
    for (;;) {
      try {
        if (fail) await this.#c.failTask(t.id, t.token, fail);
        else await this.#c.completeTask(t.id, t.token, output);
        return;
      } catch (err) {
        const wait = backoff.delay(err);
        if (!retryable(err) || performance.now() + wait > until) {
          this.#opts.logger.warn("ductor worker: result not delivered", { task: t.id, verb, err: String(err) });
          return;
        }
        await sleep(wait);
      }
    }
  }

  /** How long a result is offered for: while the lease may hold, three backoffs, and at least MIN_REPORT_MS. */
  #reportMs(t: Task, received: number): number {
    const lease = t.lease_ms == null ? 0 : t.lease_ms - (performance.now() - received);
    return Math.max(this.#opts.maxBackoffMs * 3, MIN_REPORT_MS, lease);
  }
}

/** The failure of a handler's error; the signal's reason, when it had aborted, decides the code of one that is not a TaskError. */
export function failure(err: unknown, cause?: unknown): Failure {
  const message = truncate(err instanceof Error ? err.message : String(err));
  if (err instanceof TaskError) return { code: err.code, message, retryable: err.retryable };
  const why = err instanceof ReleasedError || err instanceof DeadlineError ? err : cause;
  // Not "cancelled": the engine never retries that code, and a task handed back is to be retried.
  if (why instanceof ReleasedError) return { code: "worker_stopped", message, retryable: true };
  if (why instanceof DeadlineError) return { code: "timeout", message, retryable: true };
  return { code: "task_failed", message, retryable: true };
}

function outputProblem(output: unknown): Failure | undefined {
  let raw: string | undefined;
  try {
    raw = JSON.stringify(output);
  } catch (err) {
    return { code: "invalid_output", message: `output is not JSON: ${(err as Error).message}`, retryable: false };
  }
  if (raw === undefined) return { code: "invalid_output", message: "output is not JSON", retryable: false };
  const size = Buffer.byteLength(raw);
  if (size > MAX_OUTPUT_BYTES) {
    return { code: "payload_too_large", message: `output is ${size} bytes of JSON, over the ${MAX_OUTPUT_BYTES}-byte limit`, retryable: false };
  }
  return undefined;
}

function truncate(message: string): string {
  const b = Buffer.from(message || "task failed");
  return b.length <= MAX_MESSAGE_BYTES ? b.toString() : b.subarray(0, MAX_MESSAGE_BYTES - 3).toString().replace(/\uFFFD$/, "") + "...";
}

/** The task's declared secrets: the claimed task's `secrets`, when the server sends them. */
function secretsOf(t: Task): Readonly<Record<string, string>> {
  const s: unknown = t.secrets;
  const out: Record<string, string> = {};
  if (s && typeof s === "object" && !Array.isArray(s)) {
    for (const [k, v] of Object.entries(s)) if (typeof v === "string") out[k] = v;
  }
  return Object.freeze(out);
}

/** An exponential delay with jitter between a least and a most, at least what a Retry-After asked. */
export class Backoff {
  #next = 0;
  constructor(readonly min: number, readonly max: number) {}

  reset(): void {
    this.#next = 0;
  }

  delay(err?: unknown): number {
    if (this.#next === 0) this.#next = this.min;
    const d = this.#next;
    this.#next = Math.min(2 * this.#next, this.max);
    const jittered = d / 2 + Math.random() * (d / 2);
    const asked = (err as { retryAfterMs?: number } | undefined)?.retryAfterMs ?? 0;
    return Math.max(jittered, asked);
  }
}

/** Waits ms unless signal aborts first; reports whether ms passed. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}

/** A counting semaphore: at most n holders, the others waiting in order. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(n: number) {
    this.#free = n;
  }

  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
