import { type EventKey, isNewer, physicalMs } from "./clock";
import type { AddEvent, RegisterEvent } from "./events";
import type { RecordKind, TrackerStore } from "../store";

/**
 * What a replicated tracker remembers beyond its live book so that changes merge the same way in
 * any order (see `replica-merge.ts`):
 * - `freed`: the newest add or free of a request id, so an older add that arrives later stays dead
 *   even once the newest add has left without a free (expired, or gone with its worker);
 * - `marks`: the newest prefill completion of a request id, whether it arrived before its add or
 *   completed it (a newer add replacing that one may still precede it);
 * - `gone`: the newest unregistration of a worker id, so an older registration stays dead;
 * - `orphans`: bookings for a worker this replica does not know (yet);
 * - `excluded`: registrations whose block size lost to the tracker's.
 * Request records are kept for the expiry age past their time: an add older than that is expired
 * on arrival anyway. Unregistrations are kept for good (one small row per worker id).
 */
export class ReplicaRecords {
  readonly freed = new Map<string, EventKey>();
  readonly marks = new Map<string, EventKey>();
  readonly gone = new Map<bigint, EventKey>();
  readonly orphans = new Map<string, AddEvent>();
  readonly excluded = new Map<bigint, RegisterEvent>();

  constructor(private readonly store: TrackerStore) {}

  setFreed(id: string, key: EventKey): void {
    this.freed.set(id, key);
    this.store.recordSet?.("free", id, key);
  }

  clearFreed(id: string): void {
    this.clear(this.freed, id, "free", id);
  }

  setMark(id: string, key: EventKey): void {
    this.marks.set(id, key);
    this.store.recordSet?.("prefill", id, key);
  }

  clearMark(id: string): void {
    this.clear(this.marks, id, "prefill", id);
  }

  setGone(workerId: bigint, key: EventKey): void {
    this.gone.set(workerId, key);
    this.store.recordSet?.("gone", String(workerId), key);
  }

  clearGone(workerId: bigint): void {
    this.clear(this.gone, workerId, "gone", String(workerId));
  }

  setOrphan(event: AddEvent): void {
    this.orphans.set(event.requestId, event);
    this.store.orphanSet?.(event);
  }

  /**
   * Drops an orphan that a newer (un)registration of its worker killed, keeping its key as the id's
   * newest departed add: an older add of the id that arrives later must stay dead too.
   */
  retireOrphan(orphan: AddEvent): void {
    this.clearOrphan(orphan.requestId);
    const key = { ts: orphan.ts, origin: orphan.origin };
    if (isNewer(key, this.freed.get(orphan.requestId))) this.setFreed(orphan.requestId, key);
  }

  clearOrphan(id: string): void {
    if (this.orphans.delete(id)) this.store.orphanCleared?.(id);
  }

  setExcluded(event: RegisterEvent): void {
    this.excluded.set(event.workerId, event);
    this.store.excludedSet?.(event);
  }

  clearExcluded(workerId: bigint): void {
    if (this.excluded.delete(workerId)) this.store.excludedCleared?.(workerId);
  }

  /** Orphaned bookings of one worker. */
  orphansOf(workerId: bigint): AddEvent[] {
    return [...this.orphans.values()].filter((event) => event.workerId === workerId);
  }

  /**
   * Forgets request records that can no longer decide anything at `now`; the store forgets them by
   * the same age, in one step.
   */
  purge(now: number, expiryMs: number): void {
    const horizon = now - expiryMs;
    for (const [id, key] of this.freed) if (physicalMs(key.ts) < horizon) this.freed.delete(id);
    for (const [id, key] of this.marks) if (physicalMs(key.ts) < horizon) this.marks.delete(id);
    this.store.recordsPurged?.(horizon);
    for (const [id, event] of this.orphans) if (event.deadline < now) this.clearOrphan(id);
  }

  get size(): number {
    return this.freed.size + this.marks.size + this.gone.size + this.orphans.size + this.excluded.size;
  }

  /** Drops record `id` of `records`, telling the store its key (`name`: the id as the store keys it). */
  private clear<K>(records: Map<K, EventKey>, id: K, kind: RecordKind, name: string): void {
    const key = records.get(id);
    if (!key) return;
    records.delete(id);
    this.store.recordCleared?.(kind, name, key);
  }
}
