// The API's objects, field for field as the HTTP API sends them (snake
// case, as in the OpenAPI document, GET /api/v1/openapi.json). Each
// interface tagged @schema NAME has exactly the properties of the
// document's schema NAME: a test compares them with the served document.

/** A run's or node's status. */
export type RunStatus = "pending" | "running" | "waiting" | "succeeded" | "failed" | "cancelled" | "timed_out" | "terminated";

/** The calling key: its tenant and scopes. @schema Whoami */
export interface Whoami {
  tenant_id: string;
  key_id: string;
  key_name: string;
  prefix: string;
  scopes: string[];
  quota?: QuotaState;
}

/** Asks for a run of a published definition. @schema StartRunRequest */
export interface StartRun {
  definition: string;
  /** Left out or 0: the newest version still published. */
  version?: number;
  input?: unknown;
  subject?: string;
  context?: Record<string, unknown>;
  search_attributes?: Record<string, unknown>;
  /** Makes a repeated start answer the first run (200, existing: true). */
  idempotency_key?: string;
}

/** A started run. @schema RunStarted */
export interface RunStarted {
  id: string;
  status: RunStatus;
}

/** A started run, and whether the idempotency key named one already started. */
export interface Started extends RunStarted {
  existing: boolean;
}

/** Why a run or a node failed. @schema RunError */
export interface RunError {
  code: string;
  message?: string;
  retryable?: boolean;
  node?: string;
}

/** Why a node waits and what wakes it. @schema Waiting */
export interface Waiting {
  type: "timer" | "approval" | "child" | "signal" | "digest" | "interaction" | "event" | "event_set";
  timer_id?: string;
  until?: string;
  name?: string;
  child_key?: string;
  child_run_id?: string;
  events?: string[];
  received?: Record<string, unknown>;
  items?: unknown[];
  approvals?: number;
  approval_id?: string;
  case_id?: string;
  iteration?: number;
  items_bytes?: number;
}

/** One node of a run. @schema Node */
export interface Node {
  node: string;
  ref: string;
  type: string;
  state: "pending" | "ready" | "running" | "waiting" | "succeeded" | "failed" | "skipped" | "cancelled";
  waiting?: Waiting;
  attempt: number;
  /** Counts the node's resets (retries from a node, loops). */
  generation: number;
  output: unknown;
  error: RunError | null;
  cancel_reason?: string;
  started_at: string | null;
  finished_at: string | null;
  attempts?: Record<string, unknown>[];
  key?: string;
  index?: number;
  scatter?: Record<string, unknown>;
  waiting_for_worker?: Record<string, unknown>;
  waiting_for_slot?: Record<string, unknown>;
}

/** A run as lists show it. @schema RunSummary */
export interface RunSummary {
  id: string;
  definition: string;
  version: number;
  status: RunStatus;
  reason?: string;
  cancelled_by?: string;
  input?: unknown;
  output?: unknown;
  error: RunError | null;
  subject: string;
  context?: unknown;
  search_attributes: Record<string, unknown> | null;
  parent_run_id: string | null;
  root_run_id: string;
  depth: number;
  continued_from_run_id: string | null;
  continued_to_run_id: string | null;
  transition_count: number;
  record_version: number;
  created_at: string;
  finished_at: string | null;
  trace_id?: string;
  truncated?: string[];
}

/** A run with its nodes. @schema Run */
export interface Run extends Omit<RunSummary, "truncated"> {
  input: unknown;
  output: unknown;
  context: unknown;
  nodes?: Node[];
  children?: Record<string, unknown>;
  discarded?: Record<string, unknown>[];
  discarded_total?: number;
  waiting_for?: Record<string, unknown>;
}

/** A page of runs, newest first. @schema RunList */
export interface RunList {
  runs: RunSummary[];
  next_cursor?: string;
  prev_cursor?: string;
  total?: number;
  total_estimated?: boolean;
}

/** One change of a run's status or a node's state. @schema Transition */
export interface Transition {
  seq: number;
  at: string;
  node?: string;
  from: string;
  to: string;
  generation?: number;
  attempt?: number;
  detail?: string;
}

/** An approval a run waits for. @schema Approval */
export interface Approval {
  id: string;
  run_id: string;
  node: string;
  title: string;
  description: string;
  approvers: string[] | null;
  min_approvals: number;
  status: "pending" | "approved" | "rejected" | "closed";
  expires_at: string | null;
  created_at: string;
  decided_at: string | null;
  decisions: Record<string, unknown>[] | null;
}

/** A human-loop case, whole. @schema Case */
export interface Case {
  id: string;
  run_id: string;
  node: string;
  title: string;
  assignees: string[] | null;
  fields: unknown;
  awaiting_status: string;
  status: string;
  data: unknown;
  created_at: string;
  updated_at: string;
  updated_by: string;
  closed_at: string | null;
}

/** A case as lists show it: data only when asked for, and `truncated` naming what was left out for its size. @schema CaseSummary */
export interface CaseSummary extends Omit<Case, "data"> {
  data?: unknown;
  truncated?: string[];
}

/** Changes a case; left-out fields stay as they are. @schema CaseUpdate */
export interface CaseUpdate {
  status?: string;
  data?: unknown;
}

/** A document the server compiled: its manifest and hash. @schema Compiled */
export interface Compiled {
  key: string;
  manifest: Record<string, unknown>;
  manifest_hash: string;
}

/** A published version. @schema Published */
export interface Published {
  key: string;
  version: number;
  manifest_hash: string;
}

/** A published version, and whether it was created (false: the document was unchanged). */
export interface PublishedVersion extends Published {
  created: boolean;
}

/** A definition as lists show it. @schema DefinitionSummary */
export interface DefinitionSummary {
  key: string;
  name: string;
  latest_version: number | null;
  has_draft: boolean;
  draft?: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** A definition with its versions and event triggers. @schema Definition */
export interface DefinitionInfo extends DefinitionSummary {
  versions: VersionInfo[];
  event_triggers: Record<string, unknown>[];
}

/** A page of definitions by key. @schema DefinitionList */
export interface DefinitionList {
  definitions: DefinitionSummary[];
  next_cursor?: string;
}

/** A version; source and manifest only from getVersion. @schema Version */
export interface VersionInfo {
  key?: string;
  version: number;
  manifest_hash: string;
  format: "json" | "yaml";
  published: boolean;
  published_at: string;
  unpublished_at: string | null;
  manifest?: Record<string, unknown>;
  source?: string;
}

/** One attempt of a task step, as a worker claims it. @schema Task */
export interface Task {
  id: string;
  /** Proves the claim: sent with the result and heartbeats. */
  token: string;
  handler: string;
  queue: string;
  /** The step's evaluated input (its input_expr, or the run's input). */
  input: unknown;
  attempt: number;
  /** The same for every automatic retry of the step (`{run_id}:{node}`): pass it on so that receivers act once. */
  idempotency_key: string;
  /** By the database's clock; the worker times the deadline from deadline_ms. */
  deadline: string | null;
  lease_until: string | null;
  deadline_ms: number | null;
  lease_ms: number | null;
  run_id: string;
  node: string;
  /** The attempt's place in its run's trace (W3C Trace Context). */
  traceparent?: string;
  tracestate?: string;
  /** The values of the tenant secrets the step declares, by name; present only when it declares some. */
  secrets?: Record<string, string>;
}

/** A schedule's timing: cron or interval. @schema ScheduleSpec */
export interface ScheduleSpec {
  cron?: string;
  interval?: string;
  offset?: string;
  timezone?: string;
  jitter?: string;
  start_at?: string;
  end_at?: string;
}

/** The overlap policies of a schedule. */
export type Overlap = "skip" | "buffer_one" | "buffer_all" | "cancel_other" | "terminate_other" | "allow_all";

/** A schedule to create. @schema ScheduleRequest */
export interface ScheduleRequest {
  id?: string;
  definition: string;
  version?: number;
  spec: ScheduleSpec;
  input?: unknown;
  overlap?: Overlap;
  catchup_window?: string;
  pause_on_failure?: boolean;
  paused?: boolean;
  note?: string;
}

/** A schedule as the API shows it. @schema Schedule */
export interface Schedule extends Required<Omit<ScheduleRequest, "id">> {
  id: string;
  owned: boolean;
  next_run_at: string | null;
  actions: number;
  skipped: number;
  missed: number;
  last_error?: string;
  last_action?: Record<string, unknown>;
  recent_actions?: Record<string, unknown>[];
  created_at: string;
}

/** An inbound webhook; secret only in the answers of createWebhook and rotateWebhook. @schema Webhook */
export interface Webhook {
  id: string;
  event: string;
  scheme: "standard" | "github";
  url: string;
  secret?: string;
  secret_hint: string;
  deliveries: number;
  last_delivery: Record<string, unknown> | null;
  created_at: string;
}

/** One result of a webhook's delivery log: accepted or refused (and why), the event it made and the runs that started. @schema WebhookDelivery */
export interface WebhookDelivery {
  seq: number;
  at: string;
  result: "accepted" | "refused";
  outcome: "accepted" | "duplicate" | "id_reused" | "bad_signature" | "stale_timestamp" | "invalid_body" | "too_large";
  /** Why a refused one was: missing_signature, bad_signature, stale_timestamp, invalid_body, too_large or id_reused. */
  reason?: string;
  status: number;
  /** How many deliveries it stands for: refused ones not written each time are counted with the next. */
  count: number;
  event_id: string | null;
  run_ids: string[];
}

/** A bulk cancel, retry or upgrade: by filter or by ids. @schema BatchRequest */
export interface BatchRequest {
  action: "cancel" | "retry" | "upgrade";
  filter?: Record<string, unknown>;
  run_ids?: string[];
  reason?: string;
  /** The version an upgrade moves the runs to. */
  version?: number;
  /** Lets an upgrade cancel the running or waiting nodes of removed steps. */
  cancel_removed?: boolean;
}

/** A bulk operation and its progress. @schema Batch */
export interface Batch {
  id: string;
  action: "cancel" | "retry" | "upgrade";
  status: "running" | "completed" | "stopped";
  total: number;
  done: number;
  failed: number;
  reason?: string;
  created_by: string;
  created_at: string;
  finished_at: string | null;
  errors: { run_id: string; message: string }[];
}

/** What an upgrade batch's dry run counts: runs by outcome, and refused runs by the path of each reason. @schema UpgradeDryRun */
export interface UpgradeBatchPlan {
  action: "upgrade";
  dry_run: boolean;
  version: number;
  counts: {
    total: number;
    /** would_upgrade, noop, refused, ended (left alone), failed (cannot be planned). */
    outcomes: Record<string, number>;
    refusals: Record<string, number>;
  };
}

/** Moves a run to another published version. @schema UpgradeRequest */
export interface UpgradeRequest {
  version: number;
  /** Allows removing steps whose nodes are running or waiting: their work is withdrawn. */
  cancel_removed?: boolean;
}

/** Retries a failed run from a failed (or cancelled) node, on a version. @schema RetryRequest */
export interface RetryRequest {
  node: string;
  /** Left out: the run's own version. */
  version?: number;
  cancel_removed?: boolean;
}

/** A problem of an upgrade's plan, by its path in the target version. */
export interface PlanProblem {
  path: string;
  message: string;
}

/** An upgrade's plan, applied unless a dry run, a refusal or a no-op. @schema UpgradeResult */
export interface UpgradeResult {
  run_id: string;
  from_version: number;
  to_version: number;
  dry_run: boolean;
  applied: boolean;
  noop?: boolean;
  plan: {
    nodes: {
      ref: string;
      outcome: "kept" | "changed" | "added" | "removed" | "cancelled";
      state?: string;
      effect?: string;
      would_run?: "yes" | "no" | "when_reached";
      changes?: string[];
    }[];
    missing_reads?: PlanProblem[];
    refusals?: PlanProblem[];
    /** The nodes a retry would run again; fires_again flags a side effect that already succeeded once. */
    reruns?: {
      ref: string;
      type: string;
      state?: string;
      fires_again?: boolean;
      last_attempt?: string;
      side_effect?: boolean;
      new_in_version?: boolean;
    }[];
    /** Pending steps whose predecessors have finished: the upgrade starts (or skips) them at once. */
    reconsider?: string[];
    summary: { kept?: number; changed?: number; added?: number; removed?: number; cancelled?: number; missing_reads?: number };
  };
}

/** A delivered retry on a version. @schema RetryAccepted */
export interface RetryAccepted {
  status: "accepted";
  upgrade: UpgradeResult;
}

/** What retryRun answers: the plan, and whether the retry was delivered (false for a dry run). */
export interface RetryResult {
  accepted: boolean;
  upgrade: UpgradeResult;
}

/** A tenant secret's metadata; nothing reads its value back. @schema Secret */
export interface Secret {
  name: string;
  description: string;
  /** 1 when created, one more at each rotation. */
  version: number;
  created_at: string;
  /** key:PREFIX or user:EMAIL. */
  created_by: string;
  updated_at: string;
  updated_by: string;
  /** When a step last resolved it. */
  last_used_at: string | null;
  /** Only from getSecret: the published definition versions that reference it, newest first. */
  used_by?: SecretUse[];
}

/** A published definition version that references a secret. @schema SecretUse */
export interface SecretUse {
  key: string;
  version: number;
}

/** A secret's metadata, and whether putSecret created it (false: it rotated the value). */
export interface SecretSet extends Secret {
  created: boolean;
}

/** Sets a secret's value (write-only, at most 64 KiB). @schema SecretPut */
export interface SecretPut {
  value: string;
  /** Empty or left out: keeps the one it had. */
  description?: string;
}

/** A page of secrets. @schema SecretList */
export interface SecretList {
  secrets: Secret[];
  next_cursor?: string;
}

/** A subscription to create: the events posted to url. @schema SubscriptionRequest */
export interface SubscriptionRequest {
  url: string;
  /** Event names, or "*" for all. */
  events: string[];
  /** A CEL expression over `event` (the event's data): a delivery is sent only when it is true. */
  filter_expr?: string;
  description?: string;
}

/** An outbound subscription; secret only in the answers of createSubscription and rotateSubscription. @schema Subscription */
export interface Subscription {
  id: string;
  url: string;
  events: string[];
  filter_expr?: string;
  description?: string;
  /** The whsec_ signing secret. */
  secret?: string;
  /** Deliveries in a row that ran out of attempts. */
  failures: number;
  disabled: boolean;
  disabled_at: string | null;
  disabled_reason?: string;
  /** Until when the previous secret still signs, after a rotation. */
  previous_secret_until?: string | null;
  created_at: string;
}

/** One delivery of an event to a subscription, with its attempts. @schema SubscriptionDelivery */
export interface SubscriptionDelivery {
  id: string;
  /** Every attempt's webhook-id. */
  event_id: string;
  event: string;
  status: "pending" | "sending" | "delivered" | "failed" | "filtered";
  next_attempt_at: string | null;
  created_at: string;
  finished_at: string | null;
  attempts: {
    attempt: number;
    at: string;
    /** The HTTP status answered; 0 when there was none. */
    status: number;
    latency_ms: number;
    response_excerpt?: string;
    error?: string;
  }[];
}

/** A delivery sent again: pending. @schema Redelivery */
export interface Redelivery {
  id: string;
  status: "pending";
}

/** Metered use (step_microseconds: the steps' worker time). @schema Usage */
export interface Usage {
  runs_started: number;
  runs_succeeded: number;
  runs_failed: number;
  runs_cancelled: number;
  runs_timed_out: number;
  runs_terminated: number;
  steps: number;
  step_microseconds: number;
  events: number;
  signals: number;
  webhook_deliveries: number;
  stored_bytes: number;
  /** steps and step_microseconds by step type (a scatter child counts as its template's type); absent with no steps. */
  steps_by_type?: Record<string, { steps: number; step_microseconds: number }>;
}

/** The tenant's quotas and their use now. @schema QuotaState */
export interface QuotaState {
  tier: string;
  /** The start of the current month (UTC). */
  period: string;
  quotas: {
    quota: "monthly_steps" | "monthly_runs" | "waiting_runs" | "stored_bytes";
    used: number;
    /** The hard limit; left out when there is none. */
    limit?: number;
    soft_limit?: number;
    state: "ok" | "warning" | "exceeded";
    resets_at?: string;
  }[];
}

/** The tenant's usage over [from, to), by day or by definition. @schema UsageReport */
export interface UsageReport {
  from: string;
  to: string;
  group_by: "day" | "definition";
  total: Usage;
  days?: (Usage & { day: string })[];
  definitions?: (Usage & { definition: string })[];
  quota?: QuotaState;
}

/** Selects a usage report: days as YYYY-MM-DD or Dates (UTC); left out, the current month by day. */
export interface UsageQuery {
  /** The first day. */
  from?: Date | string;
  /** The day after the last, at most 366 days after from. */
  to?: Date | string;
  group_by?: "day" | "definition";
}

/** A tenant event. @schema EventRequest */
export interface Event {
  name: string;
  data?: unknown;
  /** Makes a repeated event answer the first one's id. */
  idempotency_key?: string;
}

/** One page of a list: limit (left out: the server's default, 50) and the previous page's next_cursor. */
export interface Page {
  limit?: number;
  cursor?: string;
}

/** Selects runs; left-out fields do not filter. */
export interface RunFilter extends Page {
  status?: RunStatus;
  definition?: string;
  subject?: string;
  parent_run_id?: string;
  /** Search attributes to match exactly (attr.NAME=VALUE). */
  attributes?: Record<string, string>;
}
