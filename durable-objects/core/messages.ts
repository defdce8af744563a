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

export const text = {
  invalidBlockSize: () => "block_size must be greater than 0",
  invalidDpSize: () => "dp_size must be greater than 0",
  invalidDpRange: (start: number, size: number) => `dp range overflows u32: start=${start} size=${size}`,
  blockSizeMismatch: (model: string, tenant: string, existing: number, requested: number) =>
    `block_size mismatch for model=${model} tenant=${tenant}: existing=${existing}, requested=${requested}`,
  duplicateWorker: (id: bigint, model: string, tenant: string) =>
    `worker ${id} already registered for model=${model} tenant=${tenant}`,
  workerNotFound: (id: bigint, model: string, tenant: string) =>
    `worker ${id} not found for model=${model} tenant=${tenant}`,
  trackerNotFound: (model: string, tenant: string) => `no slot tracker for model=${model} tenant=${tenant}`,
  rankNotFound: (id: bigint, rank: number) => `Worker ${rankText(id, rank)} not found`,
  duplicateRequest: (requestId: string, id: bigint, rank: number) =>
    `Request ${requestId} already exists (assigned to worker ${rankText(id, rank)})`,
  requestNotFound: (requestId: string) => `Request ${requestId} not found`,
  noDecodeWorker: (model: string, tenant: string) =>
    `no decode worker registered for model=${model} tenant=${tenant}: every registered worker is a prefill worker`,
};
