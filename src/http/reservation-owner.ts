/**
 * Which tracker holds a reservation, for the selection routes that name only its id
 * (`/reservations/{id}/prefill_complete`, `/output_block`, `DELETE /reservations/{id}`): Dynamo's
 * service keeps one reservation index; here a reservation is a live request of its partition's
 * tracker, and the path does not say which.
 *
 * - This isolate remembers the partition of every reservation booked through it (a bounded map,
 *   oldest first), so the common case, a lifecycle call reaching the isolate that booked, costs the
 *   one call to the tracker.
 * - Otherwise (another isolate booked it, or this one forgot) the serving replica's directory lists
 *   its trackers and each one the caller may access is asked whether it holds the id, 16 at a time:
 *   one directory call and one call per tracker, then the call itself. A client that sends its
 *   lifecycle calls to the isolate it booked through rarely pays this; one spread over many isolates
 *   pays it on most calls, in proportion to the replica's trackers.
 * - A remembered tracker that no longer holds the id (freed, expired, or booked elsewhere under the
 *   same id since) falls back to the search too.
 */
import type { Context } from "hono";
import type { TrackerKey } from "../../durable-objects/types";
import { mayAccess } from "../auth/auth";
import type { AppEnv } from "../env";
import { mapBounded } from "./fan-out";
import { trackersToList } from "./listing";
import { replicaOf } from "./replica";
import { type TrackerStub, trackerFor, trackerStub } from "./stubs";

/** Reservations whose partition this isolate remembers (about 150 bytes each). */
const MAX_REMEMBERED = 65_536;

type Partition = { model: string; tenant: string };

/** Reservation id → partition, the most recently remembered kept, at most `max`. */
export class OwnerMemory {
  private readonly owners = new Map<string, Partition>();

  constructor(private readonly max = MAX_REMEMBERED) {}

  get size(): number {
    return this.owners.size;
  }

  remember(id: string, partition: Partition): void {
    this.owners.delete(id);
    this.owners.set(id, partition);
    if (this.owners.size > this.max) this.owners.delete(this.owners.keys().next().value as string);
  }

  get(id: string): Partition | undefined {
    return this.owners.get(id);
  }

  forget(id: string): void {
    this.owners.delete(id);
  }
}

const owners = new OwnerMemory();

/** Notes that reservation `id` was booked in (model, tenant) through this isolate. */
export function rememberOwner(id: string, partition: Partition): void {
  owners.remember(id, partition);
}

export function forgetOwner(id: string): void {
  owners.forget(id);
}

/**
 * Runs `call` on the tracker holding reservation `id` in the serving replica, and returns what it
 * answered with `missing` true when no tracker the caller may access holds it (then `call` ran on
 * none, or only on a remembered tracker that answered without it).
 */
export async function onOwner<R>(
  c: Context<AppEnv>,
  id: string,
  call: (stub: TrackerStub) => Promise<R>,
  isMissing: (answer: R) => boolean,
): Promise<{ answer: R; missing: false } | { missing: true }> {
  const replica = replicaOf(c);
  const remembered = owners.get(id);
  if (remembered && mayAccess(c, remembered.tenant)) {
    const answer = await call(stubOf(c, remembered));
    if (!isMissing(answer)) return { answer, missing: false };
    forgetOwner(id);
  }
  const keys = await trackersToList(c.env, replica, { model_name: undefined, tenant_id: undefined });
  const candidates = keys.filter(
    (key) =>
      mayAccess(c, key.tenant) && !(key.model === remembered?.model && key.tenant === remembered.tenant),
  );
  const holds = await mapBounded(candidates, (key) => trackerStub(c.env, key).hasReservation(id));
  const found = candidates.find((_key, i) => holds[i]);
  if (!found) return { missing: true };
  rememberOwner(id, found);
  const answer = await call(stubOf(c, found));
  return isMissing(answer) ? { missing: true } : { answer, missing: false };
}

function stubOf(c: Context<AppEnv>, key: Partition | TrackerKey): TrackerStub {
  return trackerFor(c, { model_name: key.model, tenant_id: key.tenant });
}
