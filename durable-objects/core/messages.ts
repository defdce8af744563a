import type { ErrorCode, Failure } from "../types";

/**
 * Client-facing error texts. Where Dynamo's standalone slot tracker has a text, ours is the same
 * to the letter (clients match on them); worker ranks print as Rust's Debug form of
 * `WorkerWithDpRank`.
 */

export function fail(code: ErrorCode, message: string): Failure {
  return { ok: false, code, message };
}

export function rankText(workerId: bigint, dpRank: number): string {
  return `WorkerWithDpRank { worker_id: ${workerId}, dp_rank: ${dpRank} }`;
}

/**
 * How a text names its tracker, in Dynamo's first-generation words. Dynamo's second generation says
 * `routing_group=` for `tenant=`; the Worker renames it for clients that speak that one
 * (`src/http/partition-texts.ts`), so the object keeps one vocabulary.
 */
export function trackerPhrase(model: string, tenant: string): string {
  return `model=${model} tenant=${tenant}`;
}

/**
 * The codes whose texts name their tracker with `trackerPhrase`, once, before any other value a
 * client chose (a worker id is digits): the Worker finds the phrase there exactly. Keep this in step
 * with `text` below.
 */
export const TRACKER_NAMING_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "block_size_mismatch",
  "duplicate_worker",
  "worker_not_found",
  "tracker_not_found",
  "no_worker",
  "lease_not_found",
]);

export const text = {
  invalidBlockSize: () => "block_size must be greater than 0",
  invalidDpSize: () => "dp_size must be greater than 0",
  invalidDpRange: (start: number, size: number) => `dp range overflows u32: start=${start} size=${size}`,
  blockSizeMismatch: (model: string, tenant: string, existing: number, requested: number) =>
    `block_size mismatch for ${trackerPhrase(model, tenant)}: existing=${existing}, requested=${requested}`,
  duplicateWorker: (id: bigint, model: string, tenant: string) =>
    `worker ${id} already registered for ${trackerPhrase(model, tenant)}`,
  workerNotFound: (id: bigint, model: string, tenant: string) =>
    `worker ${id} not found for ${trackerPhrase(model, tenant)}`,
  trackerNotFound: (model: string, tenant: string) => `no slot tracker for ${trackerPhrase(model, tenant)}`,
  rankNotFound: (id: bigint, rank: number) => `Worker ${rankText(id, rank)} not found`,
  duplicateRequest: (requestId: string, id: bigint, rank: number) =>
    `Request ${requestId} already exists (assigned to worker ${rankText(id, rank)})`,
  requestNotFound: (requestId: string) => `Request ${requestId} not found`,
  /** Names the tracker first: the owner is the client's text (`TRACKER_NAMING_CODES`). */
  leaseNotFound: (model: string, tenant: string, owner: string) =>
    `no live lease for ${trackerPhrase(model, tenant)} owner ${JSON.stringify(owner)}`,
  noDecodeWorker: (model: string, tenant: string) =>
    `no decode worker registered for ${trackerPhrase(model, tenant)}: every registered worker is a prefill worker`,
};
