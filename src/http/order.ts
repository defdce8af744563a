/**
 * Orderings of listed rows. Names compare by UTF-8 bytes, as Dynamo's Rust `String` ordering does
 * (`durable-objects/core/order.ts`).
 */
import { compareBigint, compareUtf8 } from "../../durable-objects/core/order";

export interface RankRow {
  worker_id: bigint;
  dp_rank: number;
}

export function compareRank(a: RankRow, b: RankRow): number {
  return compareBigint(a.worker_id, b.worker_id) || a.dp_rank - b.dp_rank;
}

export interface TrackerRow {
  model_name: string;
  tenant_id: string;
}

export function compareTracker(a: TrackerRow, b: TrackerRow): number {
  return compareUtf8(a.model_name, b.model_name) || compareUtf8(a.tenant_id, b.tenant_id);
}
