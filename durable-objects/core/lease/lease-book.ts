import type { LiveRequest } from "../live-request";
import type { TrackerStore } from "../store";
import { Lease, type LeaseGrant } from "./lease-table";

/** A live lease as `GET /leases` lists it. */
export interface LeaseInfo {
  owner: string;
  expiresAtMs: number;
  /** Live bookings it owns here. */
  bookings: number;
}

/**
 * The leases of one tracker (`lease-table.ts` says what one is) and the live bookings each owns.
 * Each change to a lease is written through the store as that lease's one row; the earliest
 * deadline is cached for the alarm and recomputed only after a change.
 */
export class LeaseBook {
  private readonly leases = new Map<string, Lease>();
  /** The earliest deadline over the leases with a grant; null once a change made it stale. */
  private earliest: number | undefined | null = undefined;

  constructor(
    private readonly store: TrackerStore,
    /** The book's live bookings by owner (`Book.owned`), which the book keeps as they come and go. */
    private readonly owned: ReadonlyMap<string, ReadonlySet<LiveRequest>>,
  ) {}

  get(owner: string): Lease | undefined {
    return this.leases.get(owner);
  }

  /** Leases remembered, live or lapsed with cuts to keep: while any is, the tracker's state must stay. */
  get size(): number {
    return this.leases.size;
  }

  /** Every lease remembered (live, lapsed with cuts to keep), for persistence and snapshots. */
  all(): IterableIterator<Lease> {
    return this.leases.values();
  }

  /** Leases live at `now`. */
  liveCount(now: number): number {
    let live = 0;
    for (const lease of this.leases.values()) if (lease.liveAt(now)) live++;
    return live;
  }

  list(now: number): LeaseInfo[] {
    const out: LeaseInfo[] = [];
    for (const lease of this.leases.values()) {
      if (!lease.liveAt(now)) continue;
      out.push({
        owner: lease.owner,
        expiresAtMs: lease.deadline!,
        bookings: this.bookingCount(lease.owner),
      });
    }
    return out.sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0));
  }

  bookingCount(owner: string): number {
    return this.owned.get(owner)?.size ?? 0;
  }

  /** The live bookings of `owner`, as a copy (a cut drops them while it walks). */
  bookingsOf(owner: string): LiveRequest[] {
    return [...(this.owned.get(owner) ?? [])];
  }

  /** Live bookings per owner, for metrics. */
  bookingsByOwner(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [owner, set] of this.owned) counts.set(owner, set.size);
    return counts;
  }

  /** Adds a grant to `owner`'s lease. @returns the lease when its state changed. */
  grant(owner: string, grant: LeaseGrant): Lease | undefined {
    const lease = this.leases.get(owner) ?? new Lease(owner);
    if (!lease.grant(grant)) return undefined;
    this.leases.set(owner, lease);
    this.changed(lease);
    return lease;
  }

  /** Records a cut of `owner`'s lease at `at`. @returns the lease when the cut was new. */
  cut(owner: string, at: number): Lease | undefined {
    const lease = this.leases.get(owner) ?? new Lease(owner);
    if (!lease.cut(at)) return undefined;
    this.leases.set(owner, lease);
    this.changed(lease);
    return lease;
  }

  /** The earliest deadline of a lease that still has a grant (epoch ms): when one lapses next. */
  nextDeadline(): number | undefined {
    if (this.earliest === null) {
      let earliest: number | undefined;
      for (const lease of this.leases.values()) {
        const deadline = lease.deadline;
        if (deadline !== undefined && (earliest === undefined || deadline < earliest)) earliest = deadline;
      }
      this.earliest = earliest;
    }
    return this.earliest;
  }

  /** A lease whose deadline is at or before `now`, earliest first; undefined when none is due. */
  due(now: number): Lease | undefined {
    const deadline = this.nextDeadline();
    if (deadline === undefined || deadline > now) return undefined;
    for (const lease of this.leases.values()) if (lease.deadline === deadline) return lease;
    return undefined;
  }

  /** Forgets cuts before `beforeMs` and leases left with nothing to remember. */
  purge(beforeMs: number): void {
    for (const lease of [...this.leases.values()]) if (lease.purgeCuts(beforeMs)) this.changed(lease);
  }

  /** Rebuilds a lease from storage, without reporting to the store. */
  restore(lease: Lease): void {
    this.leases.set(lease.owner, lease);
    this.earliest = null;
  }

  private changed(lease: Lease): void {
    this.earliest = null;
    if (lease.empty) {
      this.leases.delete(lease.owner);
      this.store.leaseCleared?.(lease.owner);
    } else this.store.leaseSet?.(lease);
  }
}
