/**
 * Merging the worker catalog's changes (`catalog_upsert`, `catalog_remove`) and how they meet the
 * registry's (`register`, `unregister`). The rule that makes replicas converge, as for requests in
 * `replica-merge.ts`: **for each worker id, the change with the newest key wins** — upsert, removal,
 * registration or unregistration alike (keys are hybrid clock times, origin as tie-break) — and what
 * is live is a function of the winners and of the floors below:
 *
 * - the worker's record is the winning upsert's fields; a winning removal or unregistration is a
 *   tombstone (`gone`, kept for good), so an older upsert arriving later cannot bring the worker back;
 *   a winning registration makes it the slot tracker's again, with no catalog record of its own;
 * - its judgement (lifecycle, reasons) and whether and with which ranks it is in the book follow
 *   from the record and the partition's fix, itself a function of the winners (`partition-fix.ts`,
 *   `catalog-book.ts`), so every replica lists byte-identical records;
 * - a booking of a catalog worker on rank r is live iff its add wins its request id (as for every
 *   booking), r is one of the worker's ranks in the book, and the add is newer than floor(r): the
 *   newest key among the worker's changes that did not keep r's bookings. A registration, an
 *   unregistration and a removal keep none; an upsert keeps those of the ranks its origin's old and
 *   new ranges shared while the worker stayed schedulable (`keeps`, from `transitionOf`). So a DP
 *   range change is one change: bookings on ranks in both ranges stay, those on dropped ranks end,
 *   and patching a rank back does not revive them (the patch did not keep that rank).
 *
 * floor(r) is a maximum over every change of the worker, winners and losers alike, so it does not
 * depend on the order changes arrive in. It needs keeping only where it is not the winner's own
 * key: over the ranks the winning upsert kept, where it is carried in the upsert (`floors`; a
 * snapshot ships it too) and raised by each older change that arrives later. A booking whose rank
 * leaves the book without a floor above it (its worker's partition fix moved) waits as an orphan and
 * comes back if its rank does; one under a floor dies for good.
 */
import { dropBelowFloor, reconcilePartition } from "../catalog/catalog-book";
import type { CatalogEntry } from "../catalog/catalog-state";
import type { RankRange } from "../catalog/dp-ranks";
import { type FloorSegment, newestFloors, raiseFloors } from "../catalog/rank-floors";
import type { TrackerState } from "../tracker-state";
import { compareKeys, type EventKey, isNewer } from "./clock";
import type { CatalogUpsertEvent } from "./events";

/** The key of the worker's newest change this tracker holds: its record, registration or tombstone. */
export function currentKeyOf(tracker: TrackerState, workerId: bigint): EventKey | undefined {
  const { book, catalog, records } = tracker;
  return (
    catalog.entries.get(workerId)?.upsert ??
    book.workers.get(workerId)?.key ??
    records.excluded.get(workerId) ??
    records.gone.get(workerId)
  );
}

/**
 * The worker's floors over `keeps` before a new winner: the current record's, the current
 * registration's or tombstone's key on every rank, or none for a worker this tracker never saw.
 */
export function floorsBefore(
  tracker: TrackerState,
  workerId: bigint,
  keeps: RankRange | undefined,
): FloorSegment[] {
  if (keeps === undefined) return [];
  const entry = tracker.catalog.entries.get(workerId);
  if (entry) return raiseFloors(entry.upsert.floors, keeps, entry.upsert.keeps, keyOf(entry.upsert));
  const key = currentKeyOf(tracker, workerId);
  return key === undefined ? [] : [{ ...keeps, key: keyOf(key) }];
}

/** The key alone: floors are stored and shipped, and must not hold the event a key came from. */
function keyOf(key: EventKey): EventKey {
  return { ts: key.ts, origin: key.origin };
}

export function mergeCatalogUpsert(tracker: TrackerState, event: CatalogUpsertEvent): void {
  const { catalog, records } = tracker;
  // A peer of this tracker only ever ships this partition's records.
  if (event.fields.model !== tracker.model || event.fields.tenant !== tracker.tenant) return;
  const { workerId } = event;
  if (!isNewer(event, currentKeyOf(tracker, workerId))) {
    const entry = catalog.entries.get(workerId);
    if (entry) absorb(tracker, entry, event);
    return;
  }
  const floors = event.keeps
    ? newestFloors(event.keeps, event.floors, floorsBefore(tracker, workerId, event.keeps))
    : [];
  // A registration it replaces hands its book entry over: `reconcilePartition` reshapes it in place.
  records.clearExcluded(workerId);
  records.clearGone(workerId);
  catalog.set({ ...event, floors });
  reconcilePartition(tracker);
}

/**
 * A registration, unregistration or removal of `workerId` meeting its catalog record. Older than the
 * record: it loses, but ends the bookings older than it (it kept none), and `false` tells the caller
 * to stop. Newer: the record is gone, and the caller applies the change as the registry's.
 */
export function catalogYields(tracker: TrackerState, event: EventKey & { workerId: bigint }): boolean {
  const entry = tracker.catalog.entries.get(event.workerId);
  if (!entry) return true;
  if (!isNewer(event, entry.upsert)) {
    raise(tracker, entry, undefined, event);
    return false;
  }
  tracker.catalog.delete(event.workerId);
  return true;
}

/**
 * An upsert that does not win (older, or the winner itself again, as a snapshot ships it) adds what
 * it knows to the winner's floors: its own key on the ranks it did not keep (unless it is the
 * winner), and the floors it carries, which are keys of changes that did not keep those ranks.
 */
function absorb(tracker: TrackerState, entry: CatalogEntry, event: CatalogUpsertEvent): void {
  const { keeps } = entry.upsert;
  if (keeps === undefined) return;
  let floors = entry.upsert.floors;
  if (compareKeys(event, entry.upsert) !== 0) floors = raiseFloors(floors, keeps, event.keeps, keyOf(event));
  if (event.keeps !== undefined) floors = newestFloors(keeps, floors, event.floors);
  settleFloors(tracker, entry, floors);
}

/** An older change that kept only `kept` (none: nothing) raises the record's floors to its key. */
function raise(tracker: TrackerState, entry: CatalogEntry, kept: RankRange | undefined, key: EventKey): void {
  const { keeps } = entry.upsert;
  if (keeps === undefined) return;
  settleFloors(tracker, entry, raiseFloors(entry.upsert.floors, keeps, kept, keyOf(key)));
}

function settleFloors(tracker: TrackerState, entry: CatalogEntry, floors: FloorSegment[]): void {
  const { upsert } = entry;
  if (sameFloors(floors, upsert.floors)) return;
  const next = tracker.catalog.set({ ...upsert, floors });
  next.record = entry.record;
  dropBelowFloor(tracker, next);
}

function sameFloors(a: readonly FloorSegment[], b: readonly FloorSegment[]): boolean {
  return (
    a.length === b.length &&
    a.every((s, i) => {
      const t = b[i]!;
      return s.start === t.start && s.end === t.end && s.key.ts === t.key.ts && s.key.origin === t.key.origin;
    })
  );
}
