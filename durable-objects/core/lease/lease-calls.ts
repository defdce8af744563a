/**
 * The lease calls a client makes (SPEC §8) and the admission of an owned booking: what
 * `Tracker`'s lease methods and `add` check and do. Merging other replicas' lease changes is
 * `replica/lease-merge.ts`'s.
 */
import type { Result } from "../../types";
import { fail, text } from "../messages";
import { firstTsOf, physicalMs } from "../replica/clock";
import type { TrackerLimits, TrackerState } from "../tracker-state";
import { applyCut } from "./lease-cuts";
import type { LeaseGrant } from "./lease-table";

/** `POST /leases`: creates or renews `owner`'s lease for `ttlMs` (range checked by the caller). */
export function renewLease(
  tracker: TrackerState,
  limits: TrackerLimits,
  owner: string,
  ttlMs: number,
  now: number,
): Result<{ owner: string; expiresAtMs: number }> {
  const lease = tracker.leases.get(owner);
  if (!lease?.liveAt(now) && tracker.leases.liveCount(now) >= limits.maxLeases) {
    return fail("limit_exceeded", `lease limit reached: at most ${limits.maxLeases} live leases per tracker`);
  }
  const key = tracker.stamp(now);
  const at = physicalMs(key.ts);
  // A clock that saw a peer's later time keeps the grant after its own moment.
  const deadline = Math.max(now, at) + ttlMs;
  // A renewal never shortens the lease (grants only add): the answer says until when it lives.
  if (tracker.leases.grant(owner, { at, deadline })) {
    tracker.emitExternal({ ts: key.ts, origin: key.origin, type: "lease", owner, at, deadline });
  }
  return { ok: true, owner, expiresAtMs: tracker.leases.get(owner)!.deadline! };
}

/** `DELETE /leases/{owner}`: ends the lease now, freeing its bookings. */
export function endLease(tracker: TrackerState, owner: string, now: number): Result<{ freed: number }> {
  const lease = tracker.leases.get(owner);
  if (!lease?.liveAt(now)) {
    return fail("lease_not_found", text.leaseNotFound(tracker.model, tracker.tenant, owner));
  }
  // A cut clips only the grants made before its millisecond (`lease-table.ts`): a delete in the
  // millisecond of the newest grant must be cut at the next one, or it would end nothing. The
  // clock moves there first, so the cut's key stays in its millisecond and no grant made here
  // after the delete falls before it.
  tracker.clock.observe(firstTsOf(lease.newestGrant()!.at + 1) - 1);
  const key = tracker.stamp(now);
  const at = physicalMs(key.ts);
  const freed = Math.max(0, applyCut(tracker, owner, at, now));
  tracker.lapsedCount += freed;
  tracker.emitExternal({ ts: key.ts, origin: key.origin, type: "lease_cut", owner, at });
  return { ok: true, freed };
}

/** Whether `owner` may book now, and the grant its booking is made under. */
export function admitOwned(
  tracker: TrackerState,
  limits: TrackerLimits,
  owner: string,
  now: number,
): Result<{ grant: LeaseGrant }> {
  const lease = tracker.leases.get(owner);
  const grant = lease?.liveAt(now) ? lease.newestGrant() : undefined;
  if (!grant) return fail("lease_not_found", text.leaseNotFound(tracker.model, tracker.tenant, owner));
  if (tracker.leases.bookingCount(owner) >= limits.maxBookingsPerOwner) {
    return fail(
      "limit_exceeded",
      `owner booking limit reached: at most ${limits.maxBookingsPerOwner} live bookings per owner`,
    );
  }
  return { ok: true, grant };
}
