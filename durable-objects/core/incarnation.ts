/**
 * Worker incarnations (SPEC §8). A worker that crashed and came back under the same id would
 * otherwise meet its own registration (a 409 duplicate) and its dead bookings would hold its ranks
 * until they expire; saying which life it is in, a u64 that grows with each restart, lets it take
 * its own place in one step. Only a given incarnation higher than the held one's does: an absent
 * one reads as 0, so equal, lower and missing ones are today's duplicate, and a client that never
 * sends one sees nothing change.
 *
 * The replacement is one change, a `register` that carries the new incarnation. Replicas merge it
 * by key like every registration (`replica-merge.ts`), not by incarnation: what the origin admitted
 * is settled there, and two replacements made concurrently at two replicas resolve as two
 * concurrent registrations do, to the newest key.
 */
import type { LiveRequest } from "./live-request";
import type { WorkerEntry } from "./rank-slot";
import type { TrackerState } from "./tracker-state";

/** A worker's incarnation, 0 when it gave none. */
export function incarnationOf(held: { readonly incarnation?: bigint }): bigint {
  return held.incarnation ?? 0n;
}

/** Whether `next` is a later life of the worker than `held`: only a given, higher incarnation is. */
export function supersedes(
  next: { readonly incarnation?: bigint },
  held: { readonly incarnation?: bigint },
): boolean {
  return next.incarnation !== undefined && next.incarnation > incarnationOf(held);
}

/**
 * Takes out a registration that a later incarnation replaces, as `/unregister` would: its bookings
 * are dropped, and a replicated tracker remembers their keys so that a copy of one still on its
 * way from a peer stays dead. The caller registers the new incarnation in the same step.
 */
export function retireIncarnation(tracker: TrackerState, worker: WorkerEntry, now: number): LiveRequest[] {
  const dropped = tracker.removeWorker(worker, now);
  if (tracker.replicated) for (const req of dropped) tracker.remember(req);
  return dropped;
}
