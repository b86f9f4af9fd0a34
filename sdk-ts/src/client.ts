// Client calls one Ductor server's API with one API key, through the
// fetch Node ships. Every method is one call of the API; list methods
// take a page's cursor and answer the next one.

import { type Definition, definitionDocument, validateDefinition } from "./definition.js";
import { APIError } from "./errors.js";
import type {
  Approval, Batch, BatchRequest, Case, CaseSummary, CaseUpdate, Compiled, DefinitionInfo, DefinitionList, Event,
  Page, Published, PublishedVersion, Redelivery, RetryAccepted, RetryRequest, RetryResult, Run, RunFilter, RunList,
  RunStarted, Secret, SecretList, SecretSet, StartRun, Started, Subscription, SubscriptionDelivery, SubscriptionRequest,
  Task, Transition, UpgradeBatchPlan, UpgradeRequest, UpgradeResult, UsageQuery, UsageReport, VersionInfo, Whoami,
} from "./types.js";
import { Triggers } from "./triggers.js";
import { Worker, type WorkerOptions } from "./worker.js";

/** Where a client connects when no URL is given: `ductor dev`. */
export const DEFAULT_URL = "http://127.0.0.1:8080";

/** Configures a {@link Client}. */
export interface ClientOptions {
  /** The server, http(s)://HOST[:PORT] (default DUCTOR_URL, else {@link DEFAULT_URL}). */
  url?: string;
  /** A Ductor API key, dk_… (default DUCTOR_API_KEY). */
  apiKey?: string;
  /** The fetch requests go through (default: the global one). */
  fetch?: typeof fetch;
}

/** Options of one call. */
export interface CallOptions {
  /** Aborts the call. */
  signal?: AbortSignal;
}

type Query = Record<string, string | number | boolean | undefined>;

interface Answer<T> {
  status: number;
  body: T;
}

/** A client of one Ductor server's HTTP API, authenticating with one API key. */
export class Client {
  readonly baseURL: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  /** Schedules and webhooks: what starts runs by itself. */
  readonly triggers: Triggers;

  /**
   * A client of the server at opts.url authenticating with opts.apiKey,
   * each defaulting to the environment (DUCTOR_URL, DUCTOR_API_KEY). It
   * throws when the URL is not http(s) or the key is not a Ductor key.
   */
  constructor(opts: ClientOptions = {}) {
    const raw = opts.url || process.env.DUCTOR_URL || DEFAULT_URL;
    let u: URL | undefined;
    try {
      u = new URL(raw);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || !u.host) {
      throw new Error(`ductor: the server URL must be http(s)://HOST[:PORT], not ${JSON.stringify(raw)}`);
    }
    const key = opts.apiKey ?? process.env.DUCTOR_API_KEY ?? "";
    if (!key.startsWith("dk_") || /\s/.test(key)) {
      throw new Error("ductor: the API key must be a Ductor key (dk_…): `ductor dev` prints one, `ductor apikey create` makes one");
    }
    this.baseURL = u.toString().replace(/\/+$/, "");
    this.#apiKey = key;
    this.#fetch = opts.fetch ?? globalThis.fetch;
    this.triggers = new Triggers(this);
  }

  /**
   * Sends a JSON request to path under /api/v1 and answers the status and
   * the decoded JSON body. An error answer throws an {@link APIError}.
   */
  async request<T>(method: string, path: string, body?: unknown, opts: CallOptions & { query?: Query; contentType?: string } = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#apiKey}`, Accept: "application/json" };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === "string" && opts.contentType ? body : JSON.stringify(body);
      headers["Content-Type"] = opts.contentType ?? "application/json";
    }
    const url = this.baseURL + "/api/v1" + path + queryString(opts.query);
    const init: RequestInit = { method, headers };
    if (payload !== undefined) init.body = payload;
    if (opts.signal) init.signal = opts.signal;
    const res = await this.#fetch(url, init);
    const text = await res.text();
    if (res.status >= 300) throw apiError(res, text);
    return { status: res.status, body: (text === "" ? undefined : JSON.parse(text)) as T };
  }

  async #get<T>(path: string, query?: Query, opts?: CallOptions): Promise<T> {
    return (await this.request<T>("GET", path, undefined, { ...opts, query })).body;
  }

  async #post<T>(path: string, body: unknown, opts?: CallOptions): Promise<T> {
    return (await this.request<T>("POST", path, body, opts)).body;
  }

  // The key.

  /** Which tenant the key acts for, and its scopes. */
  whoami(opts?: CallOptions): Promise<Whoami> {
    return this.#get("/whoami", undefined, opts);
  }

  /** The API's OpenAPI document. */
  openAPI(opts?: CallOptions): Promise<Record<string, unknown>> {
    return this.#get("/openapi.json", undefined, opts);
  }

  // Definitions.

  /**
   * Compiles d on the server and publishes it as the next version of
   * d.key; an unchanged document answers its existing version (created:
   * false). An invalid one throws a 422 {@link APIError} whose details list
   * every problem with its path.
   */
  async publish(d: Definition, opts?: CallOptions): Promise<PublishedVersion> {
    validateDefinition(d);
    const a = await this.request<Published>("POST", definitionPath(d.key) + "/versions", definitionDocument(d), opts);
    return { ...a.body, created: a.status === 201 };
  }

  /** Publishes a document as written, JSON or YAML (contentType application/yaml). */
  async publishSource(key: string, source: string, contentType = "application/json", opts?: CallOptions): Promise<PublishedVersion> {
    const a = await this.request<Published>("POST", definitionPath(key) + "/versions", source, { ...opts, contentType });
    return { ...a.body, created: a.status === 201 };
  }

  /** Compiles d (a definition, or a document's source with its contentType) without storing anything. */
  async compile(d: Definition | string, contentType = "application/json", opts?: CallOptions): Promise<Compiled> {
    const body = typeof d === "string" ? d : definitionDocument(d);
    return (await this.request<Compiled>("POST", "/compile", body, { ...opts, contentType })).body;
  }

  /** Saves d as its key's draft (publish it later with publishDraft). */
  async saveDraft(d: Definition, opts?: CallOptions): Promise<void> {
    validateDefinition(d);
    await this.request("PUT", definitionPath(d.key), definitionDocument(d), opts);
  }

  /** Publishes key's draft as its next version. */
  async publishDraft(key: string, opts?: CallOptions): Promise<PublishedVersion> {
    const a = await this.request<Published>("POST", definitionPath(key) + "/versions", undefined, opts);
    return { ...a.body, created: a.status === 201 };
  }

  /** Lists the tenant's definitions by key. */
  listDefinitions(page: Page = {}, opts?: CallOptions): Promise<DefinitionList> {
    return this.#get("/definitions", { ...page }, opts);
  }

  /** Reads a definition with its versions. */
  getDefinition(key: string, opts?: CallOptions): Promise<DefinitionInfo> {
    return this.#get(definitionPath(key), undefined, opts);
  }

  /** Reads one version with its source and manifest. */
  getVersion(key: string, version: number, opts?: CallOptions): Promise<VersionInfo> {
    return this.#get(versionPath(key, version), undefined, opts);
  }

  /** Unpublishes a version: its runs go on; new runs by key start the newest version still published. */
  async unpublish(key: string, version: number, opts?: CallOptions): Promise<void> {
    await this.request("DELETE", versionPath(key, version), undefined, opts);
  }

  /** The JSON Schema of definition documents. */
  definitionSchema(opts?: CallOptions): Promise<Record<string, unknown>> {
    return this.#get("/schemas/definition.json", undefined, opts);
  }

  // Runs.

  /** Starts a run; with an idempotency key, a repeat answers the first run (existing: true). */
  async startRun(r: StartRun, opts?: CallOptions): Promise<Started> {
    const a = await this.request<RunStarted>("POST", "/runs", r, opts);
    return { ...a.body, existing: a.status === 200 };
  }

  /** Reads a run with its nodes. */
  getRun(id: string, opts?: CallOptions): Promise<Run> {
    return this.#get(runPath(id), undefined, opts);
  }

  /** Reads the run every intervalMs until it has ended (or opts.signal aborts). */
  async waitRun(id: string, intervalMs = 200, opts?: CallOptions): Promise<Run> {
    for (;;) {
      const r = await this.getRun(id, opts);
      if (terminal(r.status)) return r;
      await sleep(intervalMs, opts?.signal);
    }
  }

  /** Lists runs, newest first, a page at a time. */
  listRuns(f: RunFilter = {}, opts?: CallOptions): Promise<RunList> {
    const { attributes, ...rest } = f;
    const q: Query = { ...rest };
    for (const [k, v] of Object.entries(attributes ?? {})) q["attr." + k] = v;
    return this.#get("/runs", q, opts);
  }

  /** A run's transitions after seq `after` (0: from the start), oldest first, at most limit. */
  async runHistory(runID: string, after = 0, limit = 0, opts?: CallOptions): Promise<Transition[]> {
    const out = await this.#get<{ transitions: Transition[] }>(runPath(runID) + "/history", { after: after || undefined, limit: limit || undefined }, opts);
    return out.transitions;
  }

  /** Cancels a run and its sync children. */
  async cancelRun(runID: string, reason = "", opts?: CallOptions): Promise<void> {
    await this.#post(runPath(runID) + "/cancel", { reason }, opts);
  }

  /** Cancels one running or waiting node of a run (a scatter child by its id, REF[KEY]). */
  async cancelNode(runID: string, node: string, reason = "", opts?: CallOptions): Promise<void> {
    await this.#post(nodePath(runID, node) + "/cancel", { reason }, opts);
  }

  /** Retries a failed node and what follows it, keeping the outputs upstream, and resumes the run. */
  async retryNode(runID: string, node: string, opts?: CallOptions): Promise<void> {
    await this.#post(nodePath(runID, node) + "/retry", {}, opts);
  }

  /** Ends the run and starts its successor (with input, or the run's own when undefined); answers the successor's id. */
  async continueAsNew(runID: string, requestID: string, input?: unknown, opts?: CallOptions): Promise<string> {
    const out = await this.#post<{ successor_run_id: string }>(runPath(runID) + "/continue-as-new", { request_id: requestID, input }, opts);
    return out.successor_run_id;
  }

  /** A page of a scatter node's children, filtered by state and by a key prefix q. */
  scatterChildren(runID: string, node: string, f: { state?: string; q?: string; after?: number; limit?: number } = {}, opts?: CallOptions): Promise<Record<string, unknown>> {
    return this.#get(nodePath(runID, node) + "/children", { ...f }, opts);
  }

  /** Cancels, retries or upgrades runs in bulk, by filter or by ids. */
  createBatch(b: BatchRequest, opts?: CallOptions): Promise<Batch> {
    return this.#post("/runs/batch", b, opts);
  }

  /** Counts what an upgrade batch (action "upgrade") would do to each run, changing nothing. */
  async planBatch(b: BatchRequest, opts?: CallOptions): Promise<UpgradeBatchPlan> {
    return (await this.request<UpgradeBatchPlan>("POST", "/runs/batch", b, { ...opts, query: { dry_run: true } })).body;
  }

  /**
   * Moves a run that has not ended to another published version and
   * answers the plan; with dryRun, only plans. A plan that cannot be
   * applied safely is a 422 {@link APIError} whose details hold the plan
   * (its plan.refusals name each reason by path).
   */
  async upgradeRun(runID: string, u: UpgradeRequest, dryRun = false, opts?: CallOptions): Promise<UpgradeResult> {
    return (await this.request<UpgradeResult>("POST", runPath(runID) + "/upgrade", u, { ...opts, query: { dry_run: dryRun || undefined } })).body;
  }

  /**
   * Retries a failed run from a failed (or cancelled) node, on r.version
   * (left out: the run's own), and answers the plan; accepted is false
   * for a dry run, whose plan.reruns lists the nodes that would run again.
   */
  async retryRun(runID: string, r: RetryRequest, dryRun = false, opts?: CallOptions): Promise<RetryResult> {
    const a = await this.request<RetryAccepted | UpgradeResult>("POST", runPath(runID) + "/retry", r, { ...opts, query: { dry_run: dryRun || undefined } });
    return a.status === 202 ? { accepted: true, upgrade: (a.body as RetryAccepted).upgrade } : { accepted: false, upgrade: a.body as UpgradeResult };
  }

  /** Reads a bulk operation's progress. */
  getBatch(id: string, opts?: CallOptions): Promise<Batch> {
    return this.#get("/batches/" + encodeURIComponent(id), undefined, opts);
  }

  /**
   * Stops a running bulk operation where it stands and answers it, status
   * "stopped", with the counts of what it did; the runs it had not reached
   * are left as they are. One that has already ended is a 409 {@link APIError}.
   */
  stopBatch(id: string, opts?: CallOptions): Promise<Batch> {
    return this.#post("/batches/" + encodeURIComponent(id) + "/stop", undefined, opts);
  }

  // Waking runs.

  /** Sends a signal to a run. requestID deduplicates: a repeat is a 409 {@link APIError}. */
  async signal(runID: string, requestID: string, name: string, payload?: unknown, opts?: CallOptions): Promise<void> {
    await this.#post(runPath(runID) + "/signals", { request_id: requestID, name, payload }, opts);
  }

  /** Stores an event for the runs waiting for its name and answers its id. */
  async publishEvent(e: Event, opts?: CallOptions): Promise<string> {
    return (await this.#post<{ id: string }>("/events", e, opts)).id;
  }

  /** Lists the tenant's approvals with the status (pending, approved, rejected, closed; undefined for all). */
  async listApprovals(status?: string, limit?: number, opts?: CallOptions): Promise<Approval[]> {
    return (await this.#get<{ approvals: Approval[] }>("/approvals", { status, limit }, opts)).approvals;
  }

  /** Reads one approval. */
  getApproval(id: string, opts?: CallOptions): Promise<Approval> {
    return this.#get("/approvals/" + encodeURIComponent(id), undefined, opts);
  }

  /** Approves or rejects as the key; a decided approval is a 409 {@link APIError}. */
  decideApproval(id: string, approve: boolean, comment = "", opts?: CallOptions): Promise<Approval> {
    return this.#post("/approvals/" + encodeURIComponent(id) + "/decision", { decision: approve ? "approve" : "reject", comment }, opts);
  }

  /** Lists the tenant's cases with the status (undefined for all), without their data. */
  async listCases(status?: string, limit?: number, opts?: CallOptions): Promise<CaseSummary[]> {
    return (await this.#get<{ cases: CaseSummary[] }>("/cases", { status, limit }, opts)).cases;
  }

  /** Lists the tenant's cases with their data, each up to 64 KiB (a larger one's truncated says "data"). */
  async listCasesWithData(status?: string, limit?: number, opts?: CallOptions): Promise<CaseSummary[]> {
    return (await this.#get<{ cases: CaseSummary[] }>("/cases", { status, limit, include: "data" }, opts)).cases;
  }

  /** Reads one case whole, with its data. */
  getCase(id: string, opts?: CallOptions): Promise<Case> {
    return this.#get("/cases/" + encodeURIComponent(id), undefined, opts);
  }

  /** Sets a case's status and data; the awaited status resumes its run. */
  async updateCase(id: string, u: CaseUpdate, opts?: CallOptions): Promise<Case> {
    if (u.status === undefined && u.data === undefined) throw new Error("ductor: a case update needs a status or data");
    return (await this.request<Case>("PATCH", "/cases/" + encodeURIComponent(id), u, opts)).body;
  }

  // Tenant secrets: values steps resolve, never read back.

  /** Sets a secret's value (and description, when not empty); created is false when it rotated an existing one. */
  async putSecret(name: string, value: string, description = "", opts?: CallOptions): Promise<SecretSet> {
    const a = await this.request<Secret>("PUT", secretPath(name), description ? { value, description } : { value }, opts);
    return { ...a.body, created: a.status === 201 };
  }

  /** Lists the tenant's secrets by name, without their values. */
  listSecrets(page: Page = {}, opts?: CallOptions): Promise<SecretList> {
    return this.#get("/secrets", { ...page }, opts);
  }

  /** Reads a secret's metadata. */
  getSecret(name: string, opts?: CallOptions): Promise<Secret> {
    return this.#get(secretPath(name), undefined, opts);
  }

  /** Deletes a secret. */
  async deleteSecret(name: string, opts?: CallOptions): Promise<void> {
    await this.request("DELETE", secretPath(name), undefined, opts);
  }

  // Usage.

  /** The tenant's metered use from q.from to q.to (default: the current month), by day or by definition, with its quotas. */
  getUsage(q: UsageQuery = {}, opts?: CallOptions): Promise<UsageReport> {
    return this.#get("/usage", { from: day(q.from), to: day(q.to), group_by: q.group_by }, opts);
  }

  // Subscriptions: events posted to a URL of yours.

  /** Creates a subscription; the answer holds its signing secret, shown only then. */
  createSubscription(s: SubscriptionRequest, opts?: CallOptions): Promise<Subscription> {
    return this.#post("/subscriptions", s, opts);
  }

  /** Lists the tenant's subscriptions, without their secrets. */
  async listSubscriptions(limit?: number, opts?: CallOptions): Promise<Subscription[]> {
    return (await this.#get<{ subscriptions?: Subscription[] }>("/subscriptions", { limit }, opts)).subscriptions ?? [];
  }

  /** Reads a subscription. */
  getSubscription(id: string, opts?: CallOptions): Promise<Subscription> {
    return this.#get(subscriptionPath(id), undefined, opts);
  }

  /** Deletes a subscription with its delivery log. */
  async deleteSubscription(id: string, opts?: CallOptions): Promise<void> {
    await this.request("DELETE", subscriptionPath(id), undefined, opts);
  }

  /** Replaces a subscription's secret; the answer holds the new one, and the previous one still signs for a while (previous_secret_until). */
  rotateSubscription(id: string, opts?: CallOptions): Promise<Subscription> {
    return this.#post(subscriptionPath(id) + "/rotate", undefined, opts);
  }

  /** Enables a disabled subscription, its failures forgotten. */
  enableSubscription(id: string, opts?: CallOptions): Promise<Subscription> {
    return this.#post(subscriptionPath(id) + "/enable", undefined, opts);
  }

  /** A subscription's delivery log, each delivery with its attempts. */
  async listSubscriptionDeliveries(id: string, limit?: number, opts?: CallOptions): Promise<SubscriptionDelivery[]> {
    return (await this.#get<{ deliveries?: SubscriptionDelivery[] }>(subscriptionPath(id) + "/deliveries", { limit }, opts)).deliveries ?? [];
  }

  /** Sends a delivered or failed delivery again; a pending one is a 409 {@link APIError}. */
  redeliver(subscriptionID: string, deliveryID: string, opts?: CallOptions): Promise<Redelivery> {
    return this.#post(subscriptionPath(subscriptionID) + "/deliveries/" + encodeURIComponent(deliveryID) + "/redeliver", undefined, opts);
  }

  // Tasks: the bridge protocol workers speak.

  /** Claims up to max tasks of the queue for the handlers, waiting up to waitMs when there are none. */
  async pollTasks(req: { queue?: string; handlers: string[]; worker_id?: string; max?: number; wait_ms?: number }, opts?: CallOptions): Promise<Task[]> {
    return (await this.#post<{ tasks: Task[] }>("/tasks/poll", req, opts)).tasks ?? [];
  }

  /** Completes a claimed task with its output. */
  async completeTask(id: string, token: string, output: unknown, opts?: CallOptions): Promise<void> {
    await this.#post(taskPath(id) + "/complete", { token, output }, opts);
  }

  /** Fails a claimed task. */
  async failTask(id: string, token: string, error: { code?: string; message: string; retryable: boolean }, opts?: CallOptions): Promise<void> {
    await this.#post(taskPath(id) + "/fail", { token, error }, opts);
  }

  /** Extends a claimed task's lease; a 409 or 404 means the task is no longer wanted. */
  async heartbeatTask(id: string, token: string, opts?: CallOptions): Promise<{ lease_until: string }> {
    return this.#post(taskPath(id) + "/heartbeat", { token }, opts);
  }

  /** A worker polling through this client. */
  newWorker(opts: WorkerOptions = {}): Worker {
    return new Worker(this, opts);
  }
}

/** Reports whether a run's status is final. */
export function terminal(status: string): boolean {
  return ["succeeded", "failed", "cancelled", "timed_out", "terminated"].includes(status);
}

function apiError(res: Response, text: string): APIError {
  const retryAfterMs = retryAfter(res.headers.get("Retry-After"));
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string; details?: unknown } };
    if (body.error?.code) {
      const d = body.error.details as { retry_after_ms?: number } | undefined;
      return new APIError(res.status, body.error.code, body.error.message ?? "", body.error.details, retryAfterMs ?? d?.retry_after_ms);
    }
  } catch {
    // not the API's error body
  }
  return new APIError(res.status, `http_${res.status}`, text.trim(), undefined, retryAfterMs);
}

/** Reads a Retry-After header: seconds, or an HTTP date. */
function retryAfter(h: string | null): number | undefined {
  if (!h) return undefined;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const at = Date.parse(h);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function queryString(q?: Query): string {
  if (!q) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v !== undefined && v !== "" && v !== 0) p.set(k, String(v));
  }
  const s = p.toString();
  return s ? "?" + s : "";
}

function definitionPath(key: string): string { return "/definitions/" + encodeURIComponent(key); }
function versionPath(key: string, v: number): string { return definitionPath(key) + "/versions/" + v; }
function runPath(id: string): string { return "/runs/" + encodeURIComponent(id); }
function nodePath(id: string, node: string): string { return runPath(id) + "/nodes/" + encodeURIComponent(node); }
function taskPath(id: string): string { return "/tasks/" + encodeURIComponent(id); }
function secretPath(name: string): string { return "/secrets/" + encodeURIComponent(name); }
function subscriptionPath(id: string): string { return "/subscriptions/" + encodeURIComponent(id); }

/** A day as the API writes it (YYYY-MM-DD, UTC); a string is passed as written. */
function day(d: Date | string | undefined): string | undefined {
  return d instanceof Date ? d.toISOString().slice(0, 10) : d;
}

/** Waits ms, or until signal aborts (then throws its reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = (): void => { signal?.removeEventListener("abort", abort); resolve(); };
    const t = setTimeout(done, ms);
    const abort = (): void => { clearTimeout(t); reject(signal?.reason); };
    signal?.addEventListener("abort", abort, { once: true });
  });
}
