/**
 * The selection API's error texts (reference selection §1.4), word for word where Dynamo's are
 * known. `{key}` is Dynamo's `RoutingPartitionId` Display, which the reference could not pin down
 * (§7.1); its standalone indexer writes `model={m} routing_group={g}` by hand, and that is what a
 * client most plausibly sees, so it is the form here.
 */
import type { Failure } from "../../types";
import { fail } from "../messages";

export function partitionKey(model: string, routingGroup: string): string {
  return `model=${model} routing_group=${routingGroup}`;
}

export const selectionText = {
  noSchedulableWorkers: (key: string) => `no schedulable workers for ${key}`,
  pendingMiss: (id: string, key: string) =>
    `no pending selection ${id} for ${key} (expired, already used, or never selected)`,
  cachedWorkerGone: (workerId: bigint, dpRank: number, key: string) =>
    `schedulable worker ${workerId} (dp_rank ${dpRank}) not found for ${key}`,
  explicitWorkerGone: (workerId: bigint, key: string) =>
    `schedulable worker ${workerId} not found for ${key}`,
  alreadyReserved: (id: string) => `selection ${id} is already reserved or being reserved`,
  reservationNotFound: (id: string) => `reservation ${id} not found`,
  effectivePrefillAboveIsl: (effective: number, isl: number) =>
    `effective_prefill_tokens (${effective}) must not exceed isl_tokens (${isl})`,
  /** Not confirmed: Dynamo's scheduler answers a pin outside the allowed workers 400 (`PinnedWorkerNotAllowed`). */
  pinnedNotAllowed: (workerId: bigint, dpRank: number) =>
    `pinned worker ${workerId} (dp_rank ${dpRank}) is not in allowed_worker_ids`,
  /** Ours: Dynamo refuses to start with this configuration; here only hashing from tokens is refused. */
  trackingMisconfigured: (problem: string) => `router tracking hash is misconfigured: ${problem}`,
};

/** 503: the partition has no schedulable worker (or none the request may use). */
export function notReady(key: string): Failure {
  return fail("no_worker", selectionText.noSchedulableWorkers(key));
}
