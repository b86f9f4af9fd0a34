// Ductor's TypeScript SDK: a client of the HTTP API and nothing more. It
// has three parts: definitions as values, a client for every API
// operation, and workers that run your own task handlers.

export { Client, DEFAULT_URL, terminal, type CallOptions, type ClientOptions } from "./client.js";
export * from "./definition.js";
export * from "./duration.js";
export * from "./errors.js";
export * from "./steps.js";
export { Triggers } from "./triggers.js";
export type * from "./types.js";
export { Backoff, MAX_OUTPUT_BYTES, Worker, failure, type Handler, type Logger, type TaskContext, type WorkerOptions } from "./worker.js";
