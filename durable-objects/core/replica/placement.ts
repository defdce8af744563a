/**
 * Where a booking or a registration lands once the merge rules (`replica-merge.ts`) let it in:
 * booked, kept as an orphan, or dead; a worker taken out of the book with its bookings kept as adds,
 * and put back with the orphans it now places.
 */

import { belowFloor } from "../catalog/catalog-state";
import { bookingOf, type LiveRequest } from "../live-request";
import type { WorkerEntry } from "../rank-slot";
import { endedOnArrival } from "../lease/lease-cuts";
import type { TrackerState } from "../tracker-state";
import { isNewer, physicalMs } from "./clock";
import type { AddEvent, RegisterEvent } from "./events";

/** Books an add whose request id it wins, or keeps it as an orphan, or lets it die. */
export function place(tracker: TrackerState, event: AddEvent): void {
  // An owned add whose lease ended after its grant is freed by that end (`lease-cuts.ts`).
  if (endedOnArrival(tracker, event)) return;
  const { records } = tracker;
  const worker = tracker.book.workers.get(event.workerId);
  // A newer registration or unregistration of its worker ended this add's incarnation for good;
  // its key stays, so an older add of the id that arrives later stays dead too.
  if (endedBefore(tracker, event)) {
    const key = { ts: event.ts, origin: event.origin };
    if (isNewer(key, records.freed.get(event.requestId))) records.setFreed(event.requestId, key);
    return;
  }
  if (!worker || !tracker.book.slotOf(event.workerId, event.dpRank)) {
    records.setOrphan(event);
    return;
  }
  // A completion newer than the add completes it, and from now on travels with the booking.
  const mark = records.marks.get(event.requestId);
  if (mark) records.clearMark(event.requestId);
  const prefillKey = mark && isNewer(mark, event) ? mark : undefined;
  tracker.bookRequest(event, event, event.startedAt, event.deadline, prefillKey);
}

/** Registers a worker and books the orphans it now places. */
export function activate(tracker: TrackerState, event: RegisterEvent): void {
  tracker.registerWorker(event);
  for (const orphan of tracker.records.orphansOf(event.workerId)) {
    tracker.records.clearOrphan(orphan.requestId);
    place(tracker, orphan);
  }
}

/**
 * Takes a worker out of the book, returning its live requests as adds (prefill state kept as a
 * mark just after each add) so they can be placed again under the worker's next registration.
 */
export function setAside(tracker: TrackerState, worker: WorkerEntry): AddEvent[] {
  const adds: AddEvent[] = [];
  for (const req of tracker.book.requests.values()) {
    if (req.slot.workerId !== worker.workerId) continue;
    adds.push(addEventOf(tracker, req));
    tracker.rememberPrefill(req);
  }
  tracker.removeWorker(worker, physicalMs(worker.key.ts));
  return adds;
}

/** A live request as the add that booked it. */
export function addEventOf(tracker: TrackerState, req: LiveRequest): AddEvent {
  return bookingOf(req, tracker.promptOf(req));
}

/**
 * Whether a change of the add's worker newer than the add ended the rank it names: for a catalog
 * worker, the rank's floor (`core/catalog/catalog-state.ts`), which its changes that kept the rank
 * leave where it was; for a registered one, its newest registration or unregistration.
 */
function endedBefore(tracker: TrackerState, event: AddEvent): boolean {
  const entry = tracker.catalog.entries.get(event.workerId);
  if (entry) return belowFloor(entry, event.dpRank, event);
  const { records } = tracker;
  const worker = tracker.book.workers.get(event.workerId);
  const newest = worker?.key ?? records.excluded.get(event.workerId) ?? records.gone.get(event.workerId);
  return newest !== undefined && !isNewer(event, newest);
}
