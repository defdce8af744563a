/**
 * Where the catalog meets the slot tracker's book (SPEC §7: one tracker, two APIs). After any change
 * that may move the partition's fix or a worker's record, `reconcilePartition` makes the book hold
 * exactly what the judged records and registrations give, as a function of them alone:
 *
 * - the fix is the oldest candidate's (`partition-fix.ts`); every record is judged against it;
 * - a registration is in the book iff its block size is the fix's, else set aside (`excluded`);
 * - a catalog record is in the book with the ranks `slotTrackerEntry` gives it, else out of it;
 * - a catalog worker's bookings are live on the ranks it has, newer than each rank's floor
 *   (`catalog-state.ts`); a booking that leaves because its rank did, or because its worker left
 *   the book when the fix moved, is set aside as an orphan (replicated trackers), so it comes back
 *   if a later winner gives the rank back above its floor, and dies only under a floor.
 *
 * Kept ranks keep their slots, so their bookings stay booked as they were (prefill queue, anchor).
 */

import type { RegisterInput } from "../../types";
import type { WorkerEntry } from "../rank-slot";
import { type EventKey, physicalMs } from "../replica/clock";
import type { AddEvent } from "../replica/events";
import { activate, addEventOf, place, setAside } from "../replica/placement";
import type { TrackerState } from "../tracker-state";
import type { PartitionFix } from "./catalog-record";
import { belowFloor, type CatalogEntry, floorAt } from "./catalog-state";
import { judgeRecord, partitionFix } from "./partition-fix";
import { type SlotTrackerEntry, slotTrackerEntry } from "./slot-tracker-meeting";

/**
 * Settles the book against the partition's fix and the catalog: registrations of another block size
 * set aside (the founder's rule), catalog workers in or out of the book, with their ranks. Cheap
 * when nothing moved: each worker is compared with what it should be, and only a worker that
 * changes costs a pass over the live requests.
 */
export function reconcilePartition(tracker: TrackerState): void {
  const { records, book, catalog } = tracker;
  if (records.excluded.size === 0 && catalog.size === 0) return;
  const fix = partitionFix(tracker);
  const wanted = new Map<bigint, SlotTrackerEntry>();
  for (const [workerId, entry] of catalog.entries) {
    rejudge(tracker, entry, fix);
    const shape = slotTrackerEntry(entry.record, fix);
    if (shape) wanted.set(workerId, shape);
  }
  const survivors: AddEvent[] = [];
  // Out of the book first, so that it never holds two block sizes at once.
  for (const workerId of catalog.entries.keys()) {
    const worker = book.workers.get(workerId);
    if (worker && !wanted.has(workerId)) survivors.push(...leave(tracker, worker));
  }
  if (fix) settleRegistrations(tracker, fix);
  for (const [workerId, shape] of wanted) {
    survivors.push(...join(tracker, catalog.entries.get(workerId)!, shape));
  }
  for (const add of survivors) place(tracker, add);
}

/** Judges every record against the fix, touching nothing else (a tracker just read back from storage). */
export function judgeCatalog(tracker: TrackerState): void {
  const fix = partitionFix(tracker);
  for (const entry of tracker.catalog.entries.values()) rejudge(tracker, entry, fix);
}

/**
 * Judges one record against the fix. A change of lifecycle counts as a catalog change
 * (`CatalogState.version`), so what is read off the schedulable records is read again.
 */
function rejudge(tracker: TrackerState, entry: CatalogEntry, fix: PartitionFix | undefined): void {
  const before = entry.record.lifecycle;
  entry.record = judgeRecord(entry.upsert.fields, fix);
  if (entry.record.lifecycle !== before) tracker.catalog.version++;
}

/** The slot tracker's rule for its block size: registrations of another size wait aside. */
function settleRegistrations(tracker: TrackerState, fix: PartitionFix): void {
  const { records, book, catalog } = tracker;
  for (const w of [...book.workers.values()]) {
    if (catalog.entries.has(w.workerId) || w.input.blockSize === fix.blockSize) continue;
    const orphans = setAside(tracker, w);
    records.setExcluded({ ...w.key, type: "register", ...w.input });
    for (const add of orphans) records.setOrphan(add);
  }
  for (const e of [...records.excluded.values()]) {
    if (e.blockSize !== fix.blockSize) continue;
    records.clearExcluded(e.workerId);
    activate(tracker, e);
  }
}

/**
 * A catalog worker leaves the book: its bookings as adds to place (replicated), or dropped. A
 * removed record takes what the worker had cached with it (Dynamo's `remove_worker`), as an
 * unregistration does; one that only stopped being schedulable keeps it, so that the replicas,
 * which may pass through different intermediate fixes, agree.
 */
function leave(tracker: TrackerState, worker: WorkerEntry): AddEvent[] {
  if (tracker.replicated) {
    if (!tracker.catalog.entries.has(worker.workerId)) tracker.cache.removeWorker(worker.workerId);
    return setAside(tracker, worker);
  }
  tracker.removeWorker(worker, physicalMs(worker.key.ts));
  return [];
}

/**
 * Puts a catalog worker in the book with `shape`, or reshapes it there; returns the bookings that
 * left (replicated: adds to place) and the orphans it may now take.
 */
function join(tracker: TrackerState, entry: CatalogEntry, shape: SlotTrackerEntry): AddEvent[] {
  const { book, store } = tracker;
  const { workerId } = shape;
  const key: EventKey = { ts: entry.upsert.ts, origin: entry.upsert.origin };
  const input: RegisterInput = {
    workerId,
    blockSize: shape.blockSize,
    dpStart: shape.dpStart,
    dpSize: shape.dpSize,
  };
  const floors = (rank: number) => floorAt(entry, rank);
  const worker = book.workers.get(workerId);
  if (!worker) {
    const inserted = book.insertWorker(input, key);
    tracker.departures?.attach(inserted, floors);
    store.workerAdded(input, key);
    return takeOrphans(tracker, workerId);
  }
  if (sameShape(worker, input, key)) return [];
  const stays = inRange(input);
  // What a dropped rank had cached goes with it: a replica that learns of its bookings only after
  // the change does not record them (they are under the rank's floor, `replica-merge.ts`).
  for (const slot of worker.slots) if (!stays(slot.dpRank)) tracker.cache.removeRank(workerId, slot.dpRank);
  const adds = drop(tracker, entry, (rank) => !stays(rank), physicalMs(key.ts));
  const reshaped = book.reshapeWorker(worker, input, key);
  tracker.departures?.attach(reshaped, floors);
  store.workerReshaped?.(input, key);
  return [...adds, ...takeOrphans(tracker, workerId)];
}

/**
 * Takes out the bookings of a catalog worker that are on ranks `gone` says left, or under their
 * rank's floor, at `at` (epoch ms). Replicated: returned as adds to place (`place` lets those under
 * a floor die and keeps the others as orphans); otherwise dropped.
 */
function drop(
  tracker: TrackerState,
  entry: CatalogEntry,
  gone: (rank: number) => boolean,
  at: number,
): AddEvent[] {
  const adds: AddEvent[] = [];
  const leaving = [];
  for (const req of tracker.book.requests.values()) {
    if (req.slot.workerId !== entry.upsert.workerId) continue;
    const rank = req.slot.dpRank;
    if (gone(rank) || belowFloor(entry, rank, { ts: req.addTs, origin: req.origin })) leaving.push(req);
  }
  for (const req of leaving) {
    if (tracker.replicated) {
      adds.push(addEventOf(tracker, req));
      tracker.rememberPrefill(req);
    }
    tracker.dropRequest(req, at);
  }
  return adds;
}

/**
 * After a catalog worker's floors rose: its bookings now under a floor end for good, and so do
 * their places in its ranks' prefill timelines (they belong to an incarnation of the rank that the
 * floor ended, as a registration's bookings to the one before it).
 */
export function dropBelowFloor(tracker: TrackerState, entry: CatalogEntry): void {
  const adds = drop(tracker, entry, () => false, physicalMs(entry.upsert.ts));
  const worker = tracker.book.workers.get(entry.upsert.workerId);
  if (worker) tracker.departures?.attach(worker, (rank) => floorAt(entry, rank));
  for (const add of adds) place(tracker, add);
}

function takeOrphans(tracker: TrackerState, workerId: bigint): AddEvent[] {
  const orphans = tracker.records.orphansOf(workerId);
  for (const orphan of orphans) tracker.records.clearOrphan(orphan.requestId);
  return orphans;
}

function sameShape(worker: WorkerEntry, input: RegisterInput, key: EventKey): boolean {
  const { input: held } = worker;
  return (
    worker.dpStart === input.dpStart &&
    worker.dpSize === input.dpSize &&
    held.blockSize === input.blockSize &&
    held.workerType === undefined &&
    held.routerConfig === undefined &&
    worker.key.ts === key.ts &&
    worker.key.origin === key.origin
  );
}

function inRange(input: RegisterInput): (rank: number) => boolean {
  return (rank) => rank >= input.dpStart && rank < input.dpStart + input.dpSize;
}
