// The definition model: a value built here serialises to exactly the JSON
// document a user would write in a file, so the server compiles both the
// same. Field names are the document's (docs/steps.md); durations are
// milliseconds or duration strings (see duration.ts).

import { type Duration, durationString } from "./duration.js";

/** One of the fifteen step types. */
export type StepType =
  | "task" | "http" | "transform" | "condition" | "scatter" | "gather" | "subworkflow" | "checkpoint"
  | "wait" | "signal" | "event" | "event_set" | "digest" | "approval" | "human_loop";

/** The outcome an edge fires on. */
export type Outcome = "success" | "error" | "true" | "false" | "approved" | "rejected" | "done";

/** Lowers the server's limits for one definition; left-out fields keep the server's. */
export interface Limits {
  max_inline_children?: number;
  transitions_soft?: number;
  transitions_hard?: number;
  transitions_terminate?: number;
}

/** A workflow definition document. */
export interface Definition {
  key: string;
  name?: string;
  description?: string;
  /** A JSON Schema (2020-12) the trigger input must match. */
  input_schema?: unknown;
  /** The run's output (default: the sink steps' outputs by ref). */
  output_expr?: string;
  timeout?: Duration;
  limits?: Limits;
  steps: Step[];
  edges?: Edge[];
}

/** Overrides parts of a task or http step's retry policy; left-out fields keep the defaults (3 attempts, 1s, ×2, at most 1m, jitter). */
export interface Retry {
  max_attempts?: number;
  initial_interval?: Duration;
  backoff_coefficient?: number;
  max_interval?: Duration;
  jitter?: boolean;
}

/** A step's type-specific settings, keyed as in the document. */
export type With = Record<string, unknown>;

/** The document's form of a step. */
export interface StepDocument {
  ref: string;
  type: StepType;
  name?: string;
  with?: With;
  run_if?: string;
  for_each?: string;
  join?: string;
  on_error?: string;
  retry?: Record<string, unknown>;
  timeout?: string;
}

/**
 * One step of a definition. Build one with the step builders (taskStep,
 * httpStep, …) and refine it with its methods; each returns a new step.
 */
export class Step {
  readonly ref: string;
  readonly type: StepType;
  readonly fields: Readonly<Omit<StepDocument, "ref" | "type" | "retry" | "timeout">> & { retry?: Retry; timeout?: Duration };

  constructor(ref: string, type: StepType, withSettings?: With, fields: Step["fields"] = {}) {
    this.ref = ref;
    this.type = type;
    this.fields = withSettings === undefined ? fields : { ...fields, with: withSettings };
  }

  private with(change: Step["fields"]): Step {
    return new Step(this.ref, this.type, undefined, { ...this.fields, ...change });
  }

  /** A label for the dashboard. */
  named(name: string): Step { return this.with({ name }); }
  /** Runs the step only when the expression holds (else it is skipped): `run_if`. */
  if(expr: string): Step { return this.with({ run_if: expr }); }
  /** Runs the step once per element of the list expression, with item, index and key in scope: `for_each`. */
  each(listExpr: string): Step { return this.with({ for_each: listExpr }); }
  /** Makes the step ready as soon as one incoming edge fires. */
  joinAny(): Step { return this.with({ join: "any" }); }
  /** Fires the step's error and done edges on failure instead of failing the run. */
  continueOnError(): Step { return this.with({ on_error: "continue" }); }
  /** A retry policy (task and http steps). */
  withRetry(retry: Retry): Step { return this.with({ retry }); }
  /** A per-attempt timeout (task and http steps). */
  withTimeout(d: Duration): Step { return this.with({ timeout: d }); }
  /** One setting of `with` the typed settings lack, set or replaced. */
  set(key: string, value: unknown): Step { return this.with({ with: { ...this.fields.with, [key]: value } }); }

  /** The step as the document holds it. */
  toJSON(): StepDocument {
    const { retry, timeout, ...rest } = this.fields;
    return compact({ ref: this.ref, type: this.type, ...rest, retry: retry && retryDocument(retry), timeout: durationString(timeout) }) as StepDocument;
  }
}

/** Builds any step from its settings, keyed as in the document. */
export function newStep(ref: string, type: StepType, settings?: With): Step {
  return new Step(ref, type, settings);
}

/** The document's form of a retry policy. */
export function retryDocument(r: Retry): Record<string, unknown> {
  const out = compact({ ...r, initial_interval: durationString(r.initial_interval), max_interval: durationString(r.max_interval) });
  if (r.jitter !== undefined) out.jitter = r.jitter; // false turns jitter off
  return out;
}

/** An edge, or with choice a choice group. */
export interface Edge {
  from: string;
  to?: string;
  on?: Outcome;
  choice?: Choice[];
}

/** One branch of a choice group. */
export interface Choice {
  when?: string;
  default?: boolean;
  to: string;
}

/** A success edge. */
export function then(from: string, to: string): Edge { return { from, to }; }
/** An edge firing on outcome. */
export function on(from: string, to: string, outcome: Outcome): Edge { return { from, to, on: outcome }; }
/** A choice group: branches in order, the last one a default. */
export function choose(from: string, ...branches: Choice[]): Edge { return { from, choice: branches }; }
/** A choice branch taken when cond holds. */
export function when(cond: string, to: string): Choice { return { when: cond, to }; }
/** A choice group's default branch. */
export function otherwise(to: string): Choice { return { default: true, to }; }

/** The JSON document of d, as a file would hold it. */
export function definitionDocument(d: Definition): Record<string, unknown> {
  const { steps, edges, timeout, ...rest } = d;
  return compact({
    ...rest,
    steps: steps.map((s) => (s instanceof Step ? s.toJSON() : s)),
    edges: edges && edges.length > 0 ? edges : undefined,
    timeout: durationString(timeout),
  });
}

/** Reports the mistakes visible without the server: a missing key, steps without a ref or type. The server's compiler checks everything. */
export function validateDefinition(d: Definition): void {
  if (!d.key) throw new Error("ductor: definition has no key");
  if (!d.steps || d.steps.length === 0) throw new Error(`ductor: definition ${d.key} has no steps`);
  d.steps.forEach((s, i) => {
    if (!s.ref || !s.type) throw new Error(`ductor: definition ${d.key}: steps[${i}] needs a ref and a type`);
  });
}

/** Drops the zero values (undefined, null, "", 0, false) of an object's own fields, as the Go SDK leaves zero fields out. */
export function compact<T extends object>(o: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === null || v === "" || v === 0 || v === false) continue;
    out[k] = v;
  }
  return out as Partial<T>;
}
