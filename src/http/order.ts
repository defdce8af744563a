/**
 * Orderings of listed rows. Names compare by UTF-8 bytes, as Dynamo's Rust `String` ordering does
 * (`durable-objects/core/order.ts`).
 */
import { compareBigint, compareUtf8 } from "../../durable-objects/core/order";
import type { TrackerKey } from "../../durable-objects/types";

export interface RankRow {
  worker_id: bigint;
  dp_rank: number;
}

export function compareRank(a: RankRow, b: RankRow): number {
  return compareBigint(a.worker_id, b.worker_id) || a.dp_rank - b.dp_rank;
}

/** Trackers by (model, tenant): the order of listing rows, whatever name a row gives the partition. */
export function compareTracker(a: TrackerKey, b: TrackerKey): number {
  return compareUtf8(a.model, b.model) || compareUtf8(a.tenant, b.tenant);
}
