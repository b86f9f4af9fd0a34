// Schedules and webhooks: what starts runs without a caller (see
// docs/triggers.md).

import type { CallOptions, Client } from "./client.js";
import type { Overlap, Page, Schedule, ScheduleRequest, Webhook, WebhookDelivery } from "./types.js";

/** The part of the client that manages what starts runs by itself: schedules and webhooks (client.triggers). */
export class Triggers {
  readonly #c: Client;

  constructor(c: Client) {
    this.#c = c;
  }

  async #call<T>(method: string, path: string, body?: unknown, opts: CallOptions & { query?: Record<string, string | number | undefined> } = {}): Promise<T> {
    return (await this.#c.request<T>(method, path, body, opts)).body;
  }

  /** Creates a schedule and answers it. */
  createSchedule(s: ScheduleRequest, opts?: CallOptions): Promise<Schedule> {
    return this.#call("POST", "/schedules", s, opts);
  }

  /** Lists the tenant's schedules. */
  listSchedules(page: Page = {}, opts?: CallOptions): Promise<{ schedules: Schedule[]; next_cursor?: string }> {
    return this.#call("GET", "/schedules", undefined, { ...opts, query: { ...page } });
  }

  /** Reads a schedule with its recent actions. */
  getSchedule(id: string, opts?: CallOptions): Promise<Schedule> {
    return this.#call("GET", schedulePath(id), undefined, opts);
  }

  /** Changes the fields patch holds (paused, note, spec, …). */
  updateSchedule(id: string, patch: Partial<Omit<ScheduleRequest, "id" | "definition">>, opts?: CallOptions): Promise<Schedule> {
    return this.#call("PATCH", schedulePath(id), patch, opts);
  }

  /** Pauses (or, with pause false, resumes) a schedule. */
  pauseSchedule(id: string, pause: boolean, note = "", opts?: CallOptions): Promise<Schedule> {
    return this.updateSchedule(id, { paused: pause, note }, opts);
  }

  /** Deletes a schedule. */
  async deleteSchedule(id: string, opts?: CallOptions): Promise<void> {
    await this.#call("DELETE", schedulePath(id), undefined, opts);
  }

  /** Starts a run now, by the overlap policy given (left out: the schedule's). */
  triggerSchedule(id: string, overlap?: Overlap, opts?: CallOptions): Promise<{ action: Record<string, unknown> }> {
    return this.#call("POST", schedulePath(id) + "/trigger", overlap ? { overlap } : {}, opts);
  }

  /** Starts the runs the schedule would have started from `from` (included) to `to` (excluded). */
  backfillSchedule(id: string, from: Date, to: Date, overlap?: Overlap, opts?: CallOptions): Promise<{ actions: Record<string, unknown>[] }> {
    const body = { from: from.toISOString(), to: to.toISOString(), ...(overlap ? { overlap } : {}) };
    return this.#call("POST", schedulePath(id) + "/backfill", body, opts);
  }

  /** Creates a webhook; the answer holds its secret, shown only then. */
  createWebhook(id: string, event: string, scheme?: "standard" | "github", opts?: CallOptions): Promise<Webhook> {
    return this.#call("POST", "/webhooks", { id, event, ...(scheme ? { scheme } : {}) }, opts);
  }

  /** Lists the tenant's webhooks, without their secrets. */
  async listWebhooks(page: Page = {}, opts?: CallOptions): Promise<Webhook[]> {
    return (await this.#call<{ webhooks: Webhook[] }>("GET", "/webhooks", undefined, { ...opts, query: { ...page } })).webhooks;
  }

  /** Reads a webhook. */
  getWebhook(id: string, opts?: CallOptions): Promise<Webhook> {
    return this.#call("GET", webhookPath(id), undefined, opts);
  }

  /**
   * Reads a webhook's delivery log, newest first: only the "accepted" or
   * only the "refused" results when result is given. It keeps each
   * webhook's last 100 accepted and last 100 refused results.
   */
  async webhookDeliveries(id: string, f: { result?: "accepted" | "refused"; limit?: number } = {}, opts?: CallOptions): Promise<WebhookDelivery[]> {
    return (await this.#call<{ deliveries: WebhookDelivery[] }>("GET", webhookPath(id) + "/deliveries", undefined, { ...opts, query: { ...f } })).deliveries;
  }

  /** Replaces a webhook's secret; the answer holds the new one. */
  rotateWebhook(id: string, opts?: CallOptions): Promise<Webhook> {
    return this.#call("POST", webhookPath(id) + "/rotate", undefined, opts);
  }

  /** Deletes a webhook. */
  async deleteWebhook(id: string, opts?: CallOptions): Promise<void> {
    await this.#call("DELETE", webhookPath(id), undefined, opts);
  }
}

function schedulePath(id: string): string { return "/schedules/" + encodeURIComponent(id); }
function webhookPath(id: string): string { return "/webhooks/" + encodeURIComponent(id); }
