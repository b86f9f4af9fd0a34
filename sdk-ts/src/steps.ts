// Typed settings of the fifteen step types, and a builder for each. A
// left-out field is left out of the document too, so the server's default
// applies (see docs/steps.md). Fields named *_expr are CEL expressions.

import { compact, retryDocument, Step, type Retry, type StepType, type With } from "./definition.js";
import { type Duration, durationString, timeString } from "./duration.js";

/** Runs a named handler: one of the server's, or one a {@link Worker} registers. */
export interface TaskWith {
  handler: string;
  /** Sends it to the workers of another queue than "default". */
  queue?: string;
  /** Default: the run input. */
  input_expr?: string;
  /** How long the task may wait for a worker before it fails with no_worker (default: the tenant's, else 5m). */
  schedule_to_start?: Duration;
}

/** A task step. */
export function taskStep(ref: string, w: TaskWith): Step {
  return step(ref, "task", { ...w, schedule_to_start: durationString(w.schedule_to_start) });
}

/** One HTTP request; set url or url_expr, and body or body_expr. */
export interface HTTPWith {
  url?: string;
  url_expr?: string;
  /** Default GET. */
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  body_expr?: string;
  /** The statuses that succeed (default: any 2xx). */
  expect_status?: number[];
}

/** An http step. */
export function httpStep(ref: string, w: HTTPWith): Step {
  return step(ref, "http", { ...w });
}

/** Evaluates an expression; its value is the output. */
export function transformStep(ref: string, expr: string): Step {
  return step(ref, "transform", { expr });
}

/** Evaluates a boolean and ends true or false: follow it with on(ref, …, "true") and on(ref, …, "false"). */
export function conditionStep(ref: string, expr: string): Step {
  return step(ref, "condition", { expr });
}

/** A scatter's `do`: the task, http or transform step each inline child runs. */
export interface Template {
  type: "task" | "http" | "transform";
  /** TaskWith, HTTPWith, or { expr } for a transform. */
  with: TaskWith | HTTPWith | { expr: string };
  timeout?: Duration;
  retry?: Retry;
}

/** Starts one child per element of items_expr: inline (do) or child runs (mode "child_workflow", workflow). */
export interface ScatterWith {
  items_expr: string;
  key_expr?: string;
  /** inline (default) or child_workflow. */
  mode?: "inline" | "child_workflow";
  do?: Template;
  workflow?: string;
  version?: number;
  input_expr?: string;
  max_inline_children?: number;
  concurrency?: number;
  interval_ms?: number;
}

/** A scatter step. */
export function scatterStep(ref: string, w: ScatterWith): Step {
  const t = w.do;
  const template = t && compact({ ...t, with: compact({ ...t.with }), timeout: durationString(t.timeout), retry: t.retry && retryDocument(t.retry) });
  return step(ref, "scatter", { ...w, do: template });
}

/** Collapses the children of the scatter scatterRef; strategy is partition (default), include, drop or raise. */
export function gatherStep(ref: string, scatterRef: string, strategy?: "partition" | "include" | "drop" | "raise"): Step {
  return step(ref, "gather", { scatter_ref: scatterRef, strategy });
}

/** Starts a child run of workflow. */
export interface SubworkflowWith {
  workflow: string;
  /** Default: the latest. */
  version?: number;
  /** sync (default) or async. */
  mode?: "sync" | "async";
  wait_for?: string;
  input_expr?: string;
  /** timeout and on_timeout (fail_parent, detach, continue_with_error) apply in sync mode. */
  timeout?: Duration;
  on_timeout?: "fail_parent" | "detach" | "continue_with_error";
}

/** A subworkflow step. */
export function subworkflowStep(ref: string, w: SubworkflowWith): Step {
  return step(ref, "subworkflow", { ...w, timeout: durationString(w.timeout) });
}

/** Marks a named point a parent can wait for (`wait_for: checkpoint:NAME`). */
export function checkpointStep(ref: string, name: string, outputExpr?: string): Step {
  return step(ref, "checkpoint", { name, output_expr: outputExpr });
}

/** When a wait step fires: exactly one of duration, until, cron (with timezone) or until_expr. */
export interface WaitWith {
  duration?: Duration;
  until?: Date | string;
  cron?: string;
  timezone?: string;
  until_expr?: string;
}

/** A wait step. */
export function waitStep(ref: string, w: WaitWith): Step {
  return step(ref, "wait", { ...w, duration: durationString(w.duration), until: timeString(w.until) });
}

/** Waits for a signal named name sent to the run. */
export interface SignalWith {
  name: string;
  timeout?: Duration;
  /** fail (default) or skip. */
  on_timeout?: "fail" | "skip";
}

/** A signal step. */
export function signalStep(ref: string, w: SignalWith): Step {
  return step(ref, "signal", { ...w, timeout: durationString(w.timeout) });
}

/** Waits for a tenant event named name matching match_expr. */
export interface EventWith {
  name: string;
  match_expr?: string;
  timeout?: Duration;
  /** fail (default) or skip. */
  on_timeout?: "fail" | "skip";
}

/** An event step. */
export function eventStep(ref: string, w: EventWith): Step {
  return step(ref, "event", { ...w, timeout: durationString(w.timeout) });
}

/** One event of an event set. */
export interface EventMember {
  name: string;
  match_expr?: string;
  /** Identifies the member and keys the output (default: the name, or NAME#INDEX when another member has the same name). */
  key?: string;
}

/** Waits for a correlated set of events. */
export interface EventSetWith {
  events: EventMember[];
  /** all_required (default), any, quorum, count (n of them) or until_timeout. */
  policy?: "all_required" | "any" | "quorum" | "count" | "until_timeout";
  n?: number;
  timeout?: Duration;
  /** fail (default) or succeed_partial. */
  on_timeout?: "fail" | "succeed_partial";
}

/** An event_set step. */
export function eventSetStep(ref: string, w: EventSetWith): Step {
  return step(ref, "event_set", { ...w, events: w.events.map((e) => compact({ ...e })), timeout: durationString(w.timeout) });
}

/** Collects the events named name for window. */
export interface DigestWith {
  name: string;
  match_expr?: string;
  window?: Duration;
  max_items?: number;
}

/** A digest step. */
export function digestStep(ref: string, w: DigestWith): Step {
  return step(ref, "digest", { ...w, window: durationString(w.window) });
}

/** Waits for people (emails, role:NAME) to approve. */
export interface ApprovalWith {
  approvers: string[];
  title?: string;
  description?: string;
  min_approvals?: number;
  timeout?: Duration;
  /** fail (default), approve or skip. */
  on_timeout?: "fail" | "approve" | "skip";
}

/** An approval step; it ends approved or rejected. */
export function approvalStep(ref: string, w: ApprovalWith): Step {
  return step(ref, "approval", { ...w, timeout: durationString(w.timeout) });
}

/** Opens a case for people to work. */
export interface HumanLoopWith {
  title?: string;
  assignees?: string[];
  /** A JSON Schema of the case's data. */
  fields?: unknown;
  /** Default resolved. */
  awaiting_status?: string;
  timeout?: Duration;
  /** fail (default) or skip. */
  on_timeout?: "fail" | "skip";
}

/** A human_loop step. */
export function humanLoopStep(ref: string, w: HumanLoopWith): Step {
  return step(ref, "human_loop", { ...w, timeout: durationString(w.timeout) });
}

function step(ref: string, type: StepType, settings: With): Step {
  return new Step(ref, type, compact(settings));
}
