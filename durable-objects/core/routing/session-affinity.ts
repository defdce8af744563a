/**
 * Session affinity for `/route`: while a TTL is in effect, requests of one session go to the rank
 * the session was last routed to, as long as that rank is still a candidate and the binding is
 * fresh. The TTL counts from the session's last routed request (each use refreshes it). The clock
 * is passed in; every change reports itself to the store so the object can persist (and replicate) it.
 */
import { MAX_SESSION_BINDINGS } from "../../limits";
import { type EventKey, isNewer } from "../replica/clock";
import type { BindEvent } from "../replica/events";

/** The two hops of `/route`; each keeps its own bindings and its own TTL. */
export type Hop = "decode" | "prefill";

export interface SessionBinding {
  readonly sessionId: string;
  readonly hop: Hop;
  readonly workerId: bigint;
  readonly dpRank: number;
  /** Epoch ms; the binding holds until the clock passes it. */
  readonly expiresAt: number;
  /** The change that made it (replicated trackers): the newest binding of a session wins. */
  readonly key?: EventKey;
}

/** How a replicated tracker stamps and ships the bindings made here. */
export interface BindingReplication {
  stamp(now: number): EventKey;
  emit(event: BindEvent): void;
}

/** Write-through port, called synchronously inside each change (as `TrackerStore` is). */
export interface AffinityStore {
  /** A binding was made or refreshed (an upsert). */
  bound(binding: SessionBinding): void;
  /** A binding ended: expired, evicted, or its session was routed elsewhere. */
  unbound(sessionId: string, hop: Hop): void;
}

const nothing = (): void => {};
export const NULL_AFFINITY_STORE: AffinityStore = { bound: nothing, unbound: nothing };

export class SessionAffinity {
  /** In least-recently-refreshed order: a refresh re-inserts, so expired and evictable bindings come first. */
  private readonly bindings = new Map<string, SessionBinding>();

  /** Set on a replicated tracker: bindings made here are stamped and shipped to the peers. */
  replication: BindingReplication | null = null;

  constructor(
    private readonly store: AffinityStore = NULL_AFFINITY_STORE,
    private readonly maxBindings = MAX_SESSION_BINDINGS,
  ) {}

  get size(): number {
    return this.bindings.size;
  }

  /** The session's binding on `hop` if it is fresh at `now`; a stale one is dropped. */
  lookup(sessionId: string, hop: Hop, now: number): SessionBinding | undefined {
    const key = keyOf(sessionId, hop);
    const binding = this.bindings.get(key);
    if (binding === undefined || binding.expiresAt >= now) return binding;
    this.bindings.delete(key);
    this.store.unbound(sessionId, hop);
    return undefined;
  }

  /** Binds the session on `hop` to a rank, or refreshes its binding, for `ttlMs` from `now`. */
  bind(sessionId: string, hop: Hop, workerId: bigint, dpRank: number, ttlMs: number, now: number): void {
    const stamp = this.replication?.stamp(now);
    const expiresAt = now + ttlMs;
    this.put({ sessionId, hop, workerId, dpRank, expiresAt, ...(stamp ? { key: stamp } : {}) }, now);
    if (stamp)
      this.replication!.emit({ ...stamp, type: "bind", sessionId, hop, workerId, dpRank, expiresAt });
  }

  /**
   * Merges a binding made at another replica: per (session, hop) the binding with the newest key
   * wins, and one past its expiry changes nothing, so replicas agree whatever the delivery order.
   */
  merge(event: BindEvent, now: number): void {
    if (event.expiresAt < now) return;
    const current = this.bindings.get(keyOf(event.sessionId, event.hop));
    if (current?.key && !isNewer(event, current.key)) return;
    const { sessionId, hop, workerId, dpRank, expiresAt, ts, origin } = event;
    this.put({ sessionId, hop, workerId, dpRank, expiresAt, key: { ts, origin } }, now);
  }

  /** Every live binding as the change that makes it (a replication snapshot). */
  *snapshot(): Generator<BindEvent> {
    for (const b of [...this.bindings.values()]) {
      const key = b.key ?? { ts: 0, origin: "" };
      yield {
        ...key,
        type: "bind",
        sessionId: b.sessionId,
        hop: b.hop,
        workerId: b.workerId,
        dpRank: b.dpRank,
        expiresAt: b.expiresAt,
      };
    }
  }

  private put(binding: SessionBinding, now: number): void {
    const key = keyOf(binding.sessionId, binding.hop);
    this.bindings.delete(key);
    this.bindings.set(key, binding);
    this.store.bound(binding);
    this.sweep(now);
  }

  /**
   * Drops bindings from the least recently refreshed end while they are stale, or while there are
   * more than the cap. Amortised O(1) per bind; a stale binding behind a fresh one (TTLs differ per
   * hop) waits for its lookup or for the cap.
   */
  sweep(now: number): void {
    for (const [key, binding] of this.bindings) {
      if (this.bindings.size <= this.maxBindings && binding.expiresAt >= now) return;
      this.bindings.delete(key);
      this.store.unbound(binding.sessionId, binding.hop);
    }
  }

  /** Puts back a stored (or replicated) binding without reporting it; restore oldest first. */
  restore(binding: SessionBinding): void {
    const key = keyOf(binding.sessionId, binding.hop);
    this.bindings.delete(key);
    this.bindings.set(key, binding);
  }

  /** Every binding, least recently refreshed first (for persistence checks and replication). */
  entries(): IterableIterator<SessionBinding> {
    return this.bindings.values();
  }

  /** Forgets everything: the tracker was deleted, and its storage with it. */
  clear(): void {
    this.bindings.clear();
  }
}

function keyOf(sessionId: string, hop: Hop): string {
  return `${hop}\u0000${sessionId}`;
}
