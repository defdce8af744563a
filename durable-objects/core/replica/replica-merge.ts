/**
 * `core/replica/`: what lets the replicas of a tracker accept changes on their own and still
 * converge. The merge rules (this file) and where the changes they admit land (`placement.ts`),
 * the records that make them order-free (`replica-records.ts`), the prefill timelines that anchors
 * derive from (`departure-log.ts`, `rank-departures.ts`), the hybrid clock that keys each change
 * (`clock.ts`) and the changes themselves (`events.ts`). Shipping them between objects is `durable-objects/replication/`'s.
 */

import { reconcilePartition } from "../catalog/catalog-book";
import { belowFloor } from "../catalog/catalog-state";
import type { LiveRequest } from "../live-request";
import type { TrackerState } from "../tracker-state";
import { catalogYields, mergeCatalogUpsert } from "./catalog-merge";
import { type EventKey, isNewer, physicalMs } from "./clock";
import type { AddEvent, RegisterEvent, ReplicaEvent } from "./events";
import { activate, place, setAside } from "./placement";
import { applyCut } from "../lease/lease-cuts";
import { mergeKvEvents, mergeKvRank } from "../kv-events/kv-merge";

/**
 * A lease's end from another replica: recorded, and its bookings made under earlier grants freed at
 * its moment. A cut this replica already made (every replica that saw the deadline pass makes the
 * same one) changes nothing.
 */
function mergeLeaseCut(tracker: TrackerState, owner: string, at: number, now: number): void {
  const freed = applyCut(tracker, owner, at, now);
  if (freed > 0) tracker.lapsedCount += freed;
}

/**
 * Merging another replica's change into a tracker. The rule that makes replicas converge: **for
 * each request id and each worker id, the change with the newest key wins** (keys are hybrid clock
 * times with the origin as tie-break, `clock.ts`), and what is live is a function of the winners
 * alone, so any delivery order, duplicate or retry gives the same state:
 *
 * - a worker is registered iff its newest change is a registration; the tracker's block size is
 *   that of its oldest registered worker, and workers of another block size are set aside
 *   (`excluded`) rather than mixed in; catalog upserts and removals compete in the same newest-key
 *   order, and a catalog worker's bookings live by its rank floors (`catalog-merge.ts`);
 * - a request is live iff its newest change is an add (a free or nothing after it), the add is newer
 *   than its worker's current registration, its rank is in that registration's range, and its
 *   deadline (carried in the add: every replica expires it at the same moment) has not passed;
 * - its prefill is done iff a completion newer than the add exists;
 * - a registration of a worker id already registered here (a later incarnation replacing it,
 *   `incarnation.ts`, or one id registered at two replicas at once) merges as every other does: the newest
 *   key wins, incarnation or not (the origin alone judged that), and the bookings held under the
 *   registration it replaces are set aside and placed again under it by the rule above. Those
 *   older than the new registration die: they belong to the life it ended, which its origin dropped
 *   them with, so a peer drops exactly what the origin did, and a copy of one arriving later dies
 *   too. Those newer than it, made at a replica that had not seen it yet, stay on the ranks its
 *   range still has, as they will at the origin when they arrive there.
 * The newest add or free (`freed`) and the newest completion (`marks`) of each request id are
 * remembered for the expiry age, also once the add has left or its prefill is done: the record, not
 * the live book, decides what an older change arriving later does. An add for a worker unknown
 * here is kept as an orphan until a change that decides it arrives or the expiry age makes it moot.
 * Times taken from a change (a prefill's end, a free) are its key's, the same at every replica.
 *
 * An owned booking is live only while no end of its owner's lease after the grant it was made under
 * is known: a lease's grants and ends ("cuts") merge as sets, a cut ends every booking made under an
 * earlier grant, and a lapse is a cut that whichever replica sees the deadline pass records and
 * ships — so a renewal that arrives after the deadline it extends has passed resurrects nothing
 * (the rule and why it converges: `core/lease/lease-table.ts`; the frees a cut makes: `lease-cuts.ts`).
 *
 * Decaying prefill load (requests with an expected prefill duration) converges too, because its
 * anchor is not taken from the moment this replica happened to dequeue something. Each add, free and
 * completion also enters its request id's timeline (`departure-log.ts`), and a rank's front H
 * anchors at
 *   max(H.startedAt, max{ end(d) : d an add with tokens on H's rank since its worker's current
 *                          registration, key(d) < key(H) })
 * where end(d) is the earliest of d's deadline and the key time (ms) of the first change of d's
 * request id after d (its completion or free, or a newer add that replaced it). That counts every
 * add, also one that arrived here already freed, completed or expired, a free or completion that
 * arrived before its add, and one this replica only learnt of from a snapshot, which ships the
 * timelines; and it uses key times, also at the origin of a change. In one tracker it is Dynamo's
 * rule: H became the front when the last entry ahead of it left.
 */
export function applyReplicaEvent(tracker: TrackerState, event: ReplicaEvent, now: number): void {
  // What is due has left at its deadline already, as at the change's origin, which had expired it.
  tracker.expire(now);
  tracker.clock.observe(event.ts);
  // Timeline entries go in after the merge, which decides whether an add is booked here (a booked
  // add is persisted as a booking, not as a timeline row).
  switch (event.type) {
    case "add":
      // The grant an owned add was made under is one of its lease's grants (`lease-table.ts`).
      if (event.owner !== undefined && event.grant) tracker.leases.grant(event.owner, event.grant);
      mergeAdd(tracker, event, now);
      recordUnplaced(tracker, event);
      tracker.departures?.record(event, now);
      break;
    case "free":
      mergeFree(tracker, event);
      tracker.departures?.record(event, now);
      break;
    case "prefill_complete":
      mergePrefill(tracker, event);
      tracker.departures?.record(event, now);
      break;
    case "register":
      mergeRegister(tracker, event);
      break;
    case "unregister":
    case "catalog_remove":
      // A removal from the catalog is the registry's unregistration: the worker id is gone here.
      mergeUnregister(tracker, event);
      break;
    case "catalog_upsert":
      mergeCatalogUpsert(tracker, event);
      break;
    case "lease":
      tracker.leases.grant(event.owner, { at: event.at, deadline: event.deadline });
      break;
    case "lease_cut":
      mergeLeaseCut(tracker, event.owner, event.at, now);
      break;
    case "bind":
      // Session bindings keep their own newest-wins rule (`session-affinity.ts`).
      tracker.sessions?.merge(event, now);
      break;
    case "kv_events":
      // Engine KV events keep one writer per epoch and the newest epoch (`kv-merge.ts`).
      mergeKvEvents(tracker, event);
      break;
    case "kv_rank":
      mergeKvRank(tracker, event);
      break;
  }
}

/**
 * The origin recorded this booking in its cache index whatever became of it, and a free does not
 * undo a recording: so an add that is not live here (a newer free or add of its id arrived first,
 * or its worker is not known yet) is recorded too, unless a newer change of its worker ended what
 * it was booked on, which at the origin dropped the entries after it: for a catalog worker, the
 * rank's floor (a range change that dropped the rank, `catalog-book.ts`); otherwise a newer
 * (un)registration or catalog removal.
 */
function recordUnplaced(tracker: TrackerState, event: AddEvent): void {
  const live = tracker.request(event.requestId);
  if (live && live.addTs === event.ts && live.origin === event.origin) return;
  const entry = tracker.catalog.entries.get(event.workerId);
  if (entry) {
    if (belowFloor(entry, event.dpRank, event)) return;
  } else {
    const { records } = tracker;
    const newest =
      tracker.book.workers.get(event.workerId)?.key ??
      records.excluded.get(event.workerId) ??
      records.gone.get(event.workerId);
    if (newest && !isNewer(event, newest)) return;
  }
  tracker.recordCache(event, event.startedAt);
}

function keyOf(req: LiveRequest): EventKey {
  return { ts: req.addTs, origin: req.origin };
}

function mergeAdd(tracker: TrackerState, event: AddEvent, now: number): void {
  const { records } = tracker;
  const id = event.requestId;
  if (!isNewer(event, records.freed.get(id))) return;
  const live = tracker.request(id);
  if (live && !isNewer(event, keyOf(live))) return;
  const orphan = records.orphans.get(id);
  if (orphan && !isNewer(event, orphan)) return;
  if (live) {
    // Its completion may be newer than this add, and then completes it too.
    tracker.rememberPrefill(live);
    tracker.dropRequest(live, physicalMs(event.ts));
  }
  records.clearOrphan(id);
  records.clearFreed(id);
  if (event.deadline < now) {
    records.setFreed(id, { ts: event.ts, origin: event.origin });
    return;
  }
  place(tracker, event);
}

function mergeFree(tracker: TrackerState, event: Extract<ReplicaEvent, { type: "free" }>): void {
  const { records } = tracker;
  const id = event.requestId;
  if (isNewer(event, records.freed.get(id))) records.setFreed(id, event);
  const live = tracker.request(id);
  if (live && isNewer(event, keyOf(live))) {
    tracker.rememberPrefill(live);
    tracker.dropRequest(live, physicalMs(event.ts));
  }
  const orphan = records.orphans.get(id);
  if (orphan && isNewer(event, orphan)) records.clearOrphan(id);
  const mark = records.marks.get(id);
  if (mark && isNewer(event, mark)) records.clearMark(id);
}

function mergePrefill(
  tracker: TrackerState,
  event: Extract<ReplicaEvent, { type: "prefill_complete" }>,
): void {
  const { records } = tracker;
  const id = event.requestId;
  const key = { ts: event.ts, origin: event.origin };
  const live = tracker.request(id);
  if (live && isNewer(key, keyOf(live))) {
    // Kept with the booking (newest only); it becomes a mark when the booking leaves.
    if (isNewer(key, tracker.prefillKeyOf(live))) tracker.completePrefill(live, physicalMs(event.ts), key);
    return;
  }
  // Not live here (yet), or live under an add newer than it: keep it for an add it follows.
  if (isNewer(key, records.marks.get(id))) records.setMark(id, key);
}

function mergeRegister(tracker: TrackerState, event: RegisterEvent): void {
  if (!catalogYields(tracker, event)) return;
  const { records, book } = tracker;
  const worker = book.workers.get(event.workerId);
  const current = worker?.key ?? records.excluded.get(event.workerId) ?? records.gone.get(event.workerId);
  if (!isNewer(event, current)) return;
  records.clearGone(event.workerId);
  records.clearExcluded(event.workerId);
  const survivors = worker ? setAside(tracker, worker) : [];
  if (tracker.exists && event.blockSize !== tracker.blockSize) records.setExcluded(event);
  else activate(tracker, event);
  for (const add of survivors) place(tracker, add);
  reconcilePartition(tracker);
}

function mergeUnregister(tracker: TrackerState, event: EventKey & { workerId: bigint }): void {
  if (!catalogYields(tracker, event)) return;
  const { records, book } = tracker;
  const worker = book.workers.get(event.workerId);
  const current = worker?.key ?? records.excluded.get(event.workerId) ?? records.gone.get(event.workerId);
  if (!isNewer(event, current)) return;
  // Bookings made after this unregistration (at a replica that had not seen it yet) outlive it:
  // `place` keeps them as orphans for the worker's next registration and lets the older ones die.
  const survivors = worker ? setAside(tracker, worker) : [];
  records.setGone(event.workerId, event);
  records.clearExcluded(event.workerId);
  for (const orphan of records.orphansOf(event.workerId)) {
    if (!isNewer(orphan, event)) records.retireOrphan(orphan);
  }
  for (const add of survivors) place(tracker, add);
  reconcilePartition(tracker);
}
