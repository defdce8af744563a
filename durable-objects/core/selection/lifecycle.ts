/**
 * A reservation's lifecycle by its id (reference selection §1.6): prefill done, one more output
 * block, the end. Each answers 404 "reservation {id} not found" for an id that is not live here
 * (never booked, already ended, expired, or not yet replicated to this replica).
 */
import type { Result } from "../../types";
import { fail } from "../messages";
import type { Tracker } from "../tracker";
import { selectionText } from "./selection-messages";

function missing(id: string): Result {
  return fail("request_not_found", selectionText.reservationNotFound(id));
}

/** Clears the booking's prefill tokens; a repeat on a live booking is a success, as in Dynamo. */
export function completeReservationPrefill(tracker: Tracker, id: string, now: number): Result {
  tracker.expire(now);
  if (!tracker.request(id)) return missing(id);
  return tracker.prefillComplete(id, now);
}

/** One more output block on the booking's rank, weighing `decayFraction` of a block (default 1). */
export function addReservationOutputBlock(
  tracker: Tracker,
  id: string,
  decayFraction: number | undefined,
  now: number,
): Result {
  tracker.expire(now);
  const req = tracker.request(id);
  if (!req) return missing(id);
  tracker.book.addOutputBlock(req, decayFraction ?? 1);
  return { ok: true };
}

/** Frees the booking, as `/free` does. */
export function endReservation(tracker: Tracker, id: string, now: number): Result {
  tracker.expire(now);
  if (!tracker.request(id)) return missing(id);
  return tracker.free(id, now);
}
