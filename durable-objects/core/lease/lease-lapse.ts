import type { TrackerState } from "../tracker-state";
import { applyCut } from "./lease-cuts";

/**
 * A lease whose deadline `at` the clock reached with no later grant: the lapse is recorded as a cut
 * at the deadline, its bookings are freed at that moment, and the cut is shipped, so that a renewal
 * that reaches another replica later cannot keep them there either (`lease-table.ts`).
 */
export function lapse(tracker: TrackerState, owner: string, at: number, now: number): void {
  const freed = applyCut(tracker, owner, at, now);
  if (freed < 0) return;
  tracker.lapsedCount += freed;
  const key = tracker.stamp(now);
  tracker.emitExternal({ ts: key.ts, origin: key.origin, type: "lease_cut", owner, at });
}
