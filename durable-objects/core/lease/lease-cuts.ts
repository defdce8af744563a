/**
 * What a lease's end does to its bookings, at the replica that saw it and at every other alike
 * (the rule is `lease-table.ts`'s: an owned booking is live iff no cut after its grant exists).
 *
 * In a replicated tracker a booking ended by a cut leaves as if freed by a change of its own, with
 * a key every replica derives from the booking and the cut alone (`cutKey`): the cut's moment, or
 * just after the booking's add if that is later (a booking made after the cut at a replica that had
 * not heard of it is dead on arrival). So the replication records and prefill timelines that decide
 * what later changes of the id do (`replica-merge.ts`) treat it like any free, and no replica ships
 * these frees: the cut itself travels.
 */
import { firstTsOf, isNewer, type EventKey, physicalMs } from "../replica/clock";
import type { AddEvent } from "../replica/events";
import type { LiveRequest } from "../live-request";
import type { TrackerState } from "../tracker-state";

/** The key of the free a cut at `at` (epoch ms) makes of a booking whose add has key `add`. */
export function cutKey(add: EventKey, at: number): EventKey {
  const cutTs = firstTsOf(at);
  // Sorts right after the add: same time, and an origin that extends the add's.
  return cutTs > add.ts ? { ts: cutTs, origin: "" } : { ts: add.ts, origin: `${add.origin}\u0000` };
}

/**
 * Records a cut of `owner`'s lease at `at` and ends the bookings it ends. @returns how many live
 * bookings it freed, or -1 when the cut was already known (nothing changed).
 */
export function applyCut(tracker: TrackerState, owner: string, at: number, now: number): number {
  if (!tracker.leases.cut(owner, at)) return -1;
  let freed = 0;
  for (const req of tracker.leases.bookingsOf(owner)) {
    if (req.grantAt < at) {
      endByCut(tracker, req, at, now);
      freed++;
    }
  }
  return freed;
}

/**
 * Whether an owned add placed from another replica (or from the orphans) was made under a grant
 * that a known cut ended: then it is recorded as freed by that cut instead, and stays out of the
 * book, whatever order the add and the cut came in. @returns whether it was ended.
 */
export function endedOnArrival(tracker: TrackerState, event: AddEvent): boolean {
  if (event.owner === undefined || !event.grant) return false;
  const grantAt = event.grant.at;
  const cut = tracker.leases.get(event.owner)?.cuts.find((c) => c > grantAt);
  if (cut === undefined) return false;
  const key = cutKey(event, cut);
  const { records } = tracker;
  if (isNewer(key, records.freed.get(event.requestId))) records.setFreed(event.requestId, key);
  tracker.departures?.record({ ...key, type: "free", requestId: event.requestId }, physicalMs(key.ts));
  return true;
}

function endByCut(tracker: TrackerState, req: LiveRequest, at: number, now: number): void {
  if (!tracker.replicated) {
    tracker.dropRequest(req, Math.max(at, req.startedAt));
    return;
  }
  const key = cutKey({ ts: req.addTs, origin: req.origin }, at);
  const { records } = tracker;
  if (isNewer(key, records.freed.get(req.id))) records.setFreed(req.id, key);
  tracker.rememberPrefill(req);
  tracker.dropRequest(req, physicalMs(key.ts));
  tracker.departures?.record({ ...key, type: "free", requestId: req.id }, now);
}
