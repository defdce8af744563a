/**
 * What a record needs to be schedulable (reference selection §2, §7), checked in Dynamo's order: its
 * own metadata first (`notSchedulableReasons`), then, only when nothing is missing, agreement with
 * its partition (`reconcile`). Every missing item is reported; a reconciliation failure only alone.
 */

import { catalogText, reasonText } from "./catalog-messages";
import type { CatalogConfig, CatalogFields, PartitionFix } from "./catalog-record";
import { dpRanks, dpSizeOf, rankCount } from "./dp-ranks";

/** Per-rank reasons listed at most (see `kvEventReasons`). */
const MAX_LISTED = 1_024;

/**
 * Dynamo's `listener_endpoints`: the per-rank map when it has entries, else the scalar endpoint for
 * the start rank of a one-rank worker, else none.
 */
export function listenerEndpoints(record: CatalogFields): ReadonlyMap<number, string> {
  if (record.kvEventsEndpoints.size > 0) return record.kvEventsEndpoints;
  if (dpSizeOf(record) === 1 && record.kvEventsEndpoint !== undefined) {
    return new Map([[dpRanks(record).start, record.kvEventsEndpoint]]);
  }
  return new Map();
}

/** Reasons 1–5 (and the replay rule that came with 5), in order; empty when the metadata is complete. */
export function notSchedulableReasons(record: CatalogFields, config: CatalogConfig): string[] {
  const reasons: string[] = [];
  if (record.endpoint === undefined || record.endpoint === "") reasons.push(reasonText.endpoint());
  if (record.blockSize === undefined || record.blockSize === 0) reasons.push(reasonText.blockSize());
  if (dpSizeOf(record) === 0) reasons.push(reasonText.dpSize());
  if (config.queueingEnabled && record.maxNumBatchedTokens === undefined) {
    reasons.push(reasonText.maxNumBatchedTokens());
  }
  if (config.kvEventsEnabled) reasons.push(...kvEventReasons(record));
  return reasons;
}

/**
 * One reason per rank without a KV event publisher. A range may span 2^32 − 1 ranks, so the list
 * stops at {@link MAX_LISTED} reasons: Dynamo lists them all, which no real worker's rank count
 * needs and which would cost memory in every stored and replicated copy of the record.
 */
function kvEventReasons(record: CatalogFields): string[] {
  const reasons: string[] = [];
  const endpoints = listenerEndpoints(record);
  const ranks = dpRanks(record);
  for (let rank = ranks.start; rank < ranks.end && reasons.length < MAX_LISTED; rank++) {
    const endpoint = endpoints.get(rank);
    if (endpoint === undefined || endpoint === "") reasons.push(reasonText.kvEventsEndpoint(rank));
  }
  // The replay protocol carries no rank, and each rank has a socket of its own.
  if (rankCount(ranks) > 1 && record.replayEndpoint !== undefined) reasons.push(reasonText.replayEndpoint());
  return reasons;
}

export type Reconciliation = { ok: true; fix: PartitionFix } | { ok: false; reason: string };

/**
 * Whether a record with complete metadata (`blockSize` ≥ 1) agrees with its partition. A partition
 * with no fix takes the record's block size and eagle flag: the first worker to get here fixes them.
 * On a mismatch the record stays `incomplete` with the single reason "reconciliation failed: …".
 */
export function reconcile(fix: PartitionFix | undefined, record: CatalogFields): Reconciliation {
  const blockSize = record.blockSize ?? 0;
  const isEagle = record.isEagle ?? false;
  if (fix === undefined) return { ok: true, fix: { blockSize, isEagle } };
  if (fix.blockSize !== blockSize) {
    const error = catalogText.blockSizeMismatch(record.model, record.tenant, fix.blockSize, blockSize);
    return { ok: false, reason: reasonText.reconciliation(error) };
  }
  if (fix.isEagle !== isEagle) {
    const error = catalogText.isEagleMismatch(record.model, record.tenant, fix.isEagle, isEagle);
    return { ok: false, reason: reasonText.reconciliation(error) };
  }
  return { ok: true, fix };
}
