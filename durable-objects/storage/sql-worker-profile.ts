import { cardFromWire, cardToWire, type WireCard } from "../core/routing/advertisement";
import type { RouterCard, WorkerType } from "../types";
import { blobToU64, u64ToBlob } from "./u64";

/** A registration's optional fields, each present only when set. */
interface Profile {
  workerType?: WorkerType;
  routerConfig?: RouterCard;
  incarnation?: bigint;
}

/**
 * The `workers` table's `worker_type`, `router_config` and `incarnation` columns. Each is NULL when
 * the worker gave none (every row written before it existed reads that way). The card is stored in
 * its wire form, JSON text, so the stored format is the documented one; the incarnation as an
 * 8-byte BLOB, as worker ids are, because SQLite's integers stop at 2^63 − 1.
 */
export function profileColumns(input: Profile): [string | null, string | null, ArrayBuffer | null] {
  return [
    input.workerType ?? null,
    input.routerConfig === undefined ? null : JSON.stringify(cardToWire(input.routerConfig)),
    input.incarnation === undefined ? null : u64ToBlob(input.incarnation),
  ];
}

/** The optional registration fields of a stored row, present only when set. */
export function profileOfRow(row: {
  worker_type?: string | null;
  router_config?: string | null;
  incarnation?: ArrayBuffer | null;
}): Profile {
  const profile: Profile = {};
  if (row.worker_type === "decode" || row.worker_type === "prefill") profile.workerType = row.worker_type;
  if (typeof row.router_config === "string")
    profile.routerConfig = cardFromWire(JSON.parse(row.router_config) as WireCard);
  if (row.incarnation instanceof ArrayBuffer) profile.incarnation = blobToU64(row.incarnation);
  return profile;
}
