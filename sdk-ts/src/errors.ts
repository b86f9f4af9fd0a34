// Errors of the client: an error answer of the API, and the causes a
// handler's abort signal carries.

/** An error answer of the API: its HTTP status and the body's code, message and details. */
export class APIError extends Error {
  override readonly name = "APIError";
  /** The HTTP status, e.g. 404. */
  readonly status: number;
  /** The body's error code (`not_found`, `invalid_definition`, …), or `http_STATUS` for a body that is not the API's. */
  readonly code: string;
  /** Structured details when the server sent any: for `invalid_definition` a list of problems with their paths. */
  readonly details: unknown;
  /** How long the server asked to wait before trying again (Retry-After, or the details' `retry_after_ms`), in ms. */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, code: string, message: string, details?: unknown, retryAfterMs?: number) {
    super(`ductor: ${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfterMs = retryAfterMs;
  }

  /** The server's message, without the status and code. */
  get serverMessage(): string {
    return this.message.replace(/^ductor: \d+ [^:]*: /, "");
  }
}

/** Reports whether err is an {@link APIError} with the HTTP status. */
export function isStatus(err: unknown, status: number): boolean {
  return err instanceof APIError && err.status === status;
}

/**
 * A task failure with a code and a retryability. Any other error a handler
 * throws fails the attempt as a retryable `task_failed` with its message.
 */
export class TaskError extends Error {
  override readonly name = "TaskError";
  readonly code: string;
  readonly retryable: boolean;

  constructor(message: string, opts: { code?: string; retryable?: boolean } = {}) {
    super(message);
    this.code = opts.code ?? "task_failed";
    this.retryable = opts.retryable ?? true;
  }
}

/** Marks err as not worth retrying: the step fails at once. */
export function permanent(err: unknown): TaskError {
  const code = err instanceof TaskError ? err.code : "task_failed";
  return new TaskError(err instanceof Error ? err.message : String(err), { code, retryable: false });
}

/** The reason of a handler's signal when the server no longer wants its task: it was cancelled, or its lease ran out. */
export class TaskLostError extends Error {
  override readonly name = "TaskLostError";
  constructor() {
    super("ductor: the task was cancelled or its lease was lost");
  }
}

/** The reason of a handler's signal when the worker shuts down and hands the task back. */
export class ReleasedError extends Error {
  override readonly name = "ReleasedError";
  constructor() {
    super("ductor: the worker is shutting down");
  }
}

/** The reason of a handler's signal when the task's deadline passes. */
export class DeadlineError extends Error {
  override readonly name = "DeadlineError";
  constructor() {
    super("ductor: the task's deadline passed");
  }
}

/** Reports whether a call may succeed when tried again: the server was unreachable, or answered 429 or a 5xx. */
export function retryable(err: unknown): boolean {
  if (err instanceof APIError) return err.status === 429 || err.status >= 500;
  return !(err instanceof Error && err.name === "AbortError");
}
