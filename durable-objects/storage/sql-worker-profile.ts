import { cardFromWire, cardToWire, type WireCard } from "../core/routing/advertisement";
import type { RouterCard, WorkerType } from "../types";

/**
 * The `workers` table's `worker_type` and `router_config` columns. Both are NULL when the worker
 * gave none (every row written before they existed reads that way), and the card is stored in its
 * wire form, JSON text, so the stored format is the documented one.
 */
export function profileColumns(input: {
  workerType?: WorkerType;
  routerConfig?: RouterCard;
}): [string | null, string | null] {
  return [
    input.workerType ?? null,
    input.routerConfig === undefined ? null : JSON.stringify(cardToWire(input.routerConfig)),
  ];
}

/** The optional registration fields of a stored row, present only when set. */
export function profileOfRow(row: { worker_type?: string | null; router_config?: string | null }): {
  workerType?: WorkerType;
  routerConfig?: RouterCard;
} {
  const profile: { workerType?: WorkerType; routerConfig?: RouterCard } = {};
  if (row.worker_type === "decode" || row.worker_type === "prefill") profile.workerType = row.worker_type;
  if (typeof row.router_config === "string")
    profile.routerConfig = cardFromWire(JSON.parse(row.router_config) as WireCard);
  return profile;
}
