/**
 * What a write does to the worker it replaces, in Dynamo's order (`reconcile_worker`,
 * `delete_worker`). A schedulable worker that moves partition or stops being schedulable is drained
 * first: it leaves scheduling and its index entries are dropped before the new record commits. A
 * schedulable worker that stays schedulable keeps the bookings on ranks its old and new ranges share.
 */
import type { CatalogRecord, PartitionFix } from "./catalog-record";
import { type RankChange, type RankRange, rankChange } from "./dp-ranks";
import { type SlotTrackerEntry, slotTrackerEntry } from "./slot-tracker-meeting";

/** `worker_id` is service-wide: a record naming another (model, routing group) moves the worker there. */
export function movesPartition(previous: CatalogRecord, next: CatalogRecord): boolean {
  return previous.model !== next.model || previous.tenant !== next.tenant;
}

export function drainsPrevious(previous: CatalogRecord | undefined, next: CatalogRecord): boolean {
  if (previous === undefined || previous.lifecycle !== "schedulable") return false;
  return movesPartition(previous, next) || next.lifecycle !== "schedulable";
}

export interface Transition {
  /** The previous record is set `draining` and its approximate-index entries dropped, before the commit. */
  readonly drains: boolean;
  /** The worker leaves the previous record's partition for the new record's. */
  readonly moves: boolean;
  /**
   * The worker's ranks in the slot tracker (`slotTrackerEntry`) before and after. On a move,
   * `removed` is in the old partition's tracker and `added` in the new one's, and nothing is kept.
   */
  readonly ranks: RankChange;
  /**
   * Ranks whose live bookings end: every old rank when the worker drains or moves (Dynamo drops a
   * worker that leaves scheduling), otherwise only the ranks the new range drops.
   */
  readonly endsBookingsOn: readonly RankRange[];
}

/**
 * The transition from `previous` (the catalog's record for the id, if any, judged against
 * `fixBefore`) to `next` (just built, with its partition's fix after it, `fixAfter`).
 */
export function transitionOf(
  previous: CatalogRecord | undefined,
  next: CatalogRecord,
  fixBefore: PartitionFix | undefined,
  fixAfter: PartitionFix | undefined,
): Transition {
  const drains = drainsPrevious(previous, next);
  const moves = previous !== undefined && movesPartition(previous, next);
  const before = previous && rangeOf(slotTrackerEntry(previous, fixBefore));
  const after = rangeOf(slotTrackerEntry(next, fixAfter));
  if (moves) {
    const ranks = { kept: undefined, removed: before ? [before] : [], added: after ? [after] : [] };
    return { drains, moves, ranks, endsBookingsOn: ranks.removed };
  }
  const ranks = rankChange(before, after);
  return { drains, moves, ranks, endsBookingsOn: drains && before ? [before] : ranks.removed };
}

function rangeOf(entry: SlotTrackerEntry | undefined): RankRange | undefined {
  return entry && { start: entry.dpStart, end: entry.dpStart + entry.dpSize };
}

/** `DELETE /workers/{id}`: each step's record. The reply is `final`; then the record is forgotten. */
export interface Deletion {
  /** First the worker leaves scheduling; its index entries are dropped while it is in this state. */
  readonly draining: CatalogRecord;
  /** Then it is `unschedulable`, reasons cleared: the record the DELETE answers with. */
  readonly final: CatalogRecord;
}

export function deletionOf(record: CatalogRecord): Deletion {
  return {
    draining: { ...record, lifecycle: "draining", notSchedulableReasons: [] },
    final: { ...record, lifecycle: "unschedulable", notSchedulableReasons: [] },
  };
}
