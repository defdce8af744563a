/**
 * Prefill accounting of one rank: the FIFO of requests whose prompt tokens still wait for prefill,
 * and Dynamo's anchor rule for decaying that load over an expected prefill duration
 * (`lib/kv-router/src/sequences/prefill_tracker.rs`; reference §1.3).
 *
 * The anchor is the FIFO front. A front that arrives while the queue is empty anchors at its own add
 * time; when the front leaves (prefill complete, free, expiry), the next one anchors at that moment.
 * Two modes, decided by whether any queued request lacks a duration:
 * - anchor-only: `S − A + A_rem`, where only the anchor decays:
 *   `A_rem = ceil(A × clamp(1 − elapsed/duration, 0, 1))` (A itself without a duration, 0 for 0 ms);
 * - all-modeled: `max(0, S − floor(A × elapsed/duration))`, not clamped to A, so the anchor's
 *   overrun spills into the requests behind it; a 0 ms anchor completes at once.
 * Requests without a duration never decay, so a tracker fed only by Dynamo-compatible `/add` calls
 * reports the plain sum of pending `new_isl_tokens`, exactly as the standalone service does.
 *
 * A replicated tracker attaches the rank's `departures` and derives the anchor time from them
 * instead (`departure-log.ts`): the same rule, stated so that it does not depend on the order in
 * which this replica learnt of the entries and their removals.
 */
import type { RankDepartures } from "./replica/rank-departures";

/** A queued prefill; `LiveRequest` implements it so the queue needs no node objects of its own. */
export interface PrefillEntry {
  /** Tokens still to prefill when the request was added (> 0 to be queued at all). */
  readonly prefillTokens: number;
  /** Expected prefill duration in ms; NaN when the request gave none. */
  readonly prefillDurationMs: number;
  /** The booking's replication key (hybrid clock time, origin): the queue's order. */
  readonly addTs: number;
  readonly origin: string;
  /** When it was booked, epoch ms: it anchors no earlier than that. */
  readonly startedAt: number;
  prefillPrev: PrefillEntry | null;
  prefillNext: PrefillEntry | null;
  inPrefill: boolean;
}

export class PrefillQueue {
  head: PrefillEntry | null = null;
  private tail: PrefillEntry | null = null;
  /** Sum of `prefillTokens` over the queue. */
  private sum = 0;
  /** Queued entries without a duration (anchor-only mode while > 0). */
  private unmodeled = 0;
  /** Queued entries. */
  private size = 0;
  /** When the current front became the anchor, ms (a replicated tracker's is derived: `anchorTime`). */
  anchorAt = 0;
  /** Replicated trackers: this rank's departures, which the anchor time is derived from. */
  departures: RankDepartures | null = null;
  /** The derived anchor time, for `derivedFor` at `derivedVersion` of `departures`. */
  private derivedAt = 0;
  private derivedFor: PrefillEntry | null = null;
  private derivedVersion = -1;

  /**
   * Queues an entry at `now`, in booking order: the key order, so every replica builds the same
   * queue whatever order bookings reached it in (locally that is plain arrival order). An entry that
   * lands at the front becomes the anchor at `now`.
   */
  push(entry: PrefillEntry, now: number): void {
    entry.inPrefill = true;
    let after = this.tail;
    while (after && sortsAfter(after, entry)) after = after.prefillPrev;
    entry.prefillPrev = after;
    entry.prefillNext = after ? after.prefillNext : this.head;
    if (entry.prefillNext) entry.prefillNext.prefillPrev = entry;
    else this.tail = entry;
    if (after) after.prefillNext = entry;
    else {
      this.head = entry;
      this.anchorAt = now;
    }
    this.sum += entry.prefillTokens;
    this.size++;
    if (Number.isNaN(entry.prefillDurationMs)) this.unmodeled++;
  }

  /**
   * Removes an entry at `now`.
   * @returns the entry that became the anchor by this removal, if any (its anchor time is `now`,
   * and never before its own booking).
   */
  remove(entry: PrefillEntry, now: number): PrefillEntry | null {
    if (!entry.inPrefill) return null;
    entry.inPrefill = false;
    const wasHead = entry === this.head;
    if (entry.prefillPrev) entry.prefillPrev.prefillNext = entry.prefillNext;
    else this.head = entry.prefillNext;
    if (entry.prefillNext) entry.prefillNext.prefillPrev = entry.prefillPrev;
    else this.tail = entry.prefillPrev;
    entry.prefillPrev = null;
    entry.prefillNext = null;
    this.sum -= entry.prefillTokens;
    this.size--;
    if (Number.isNaN(entry.prefillDurationMs)) this.unmodeled--;
    if (!wasHead || !this.head) return null;
    this.anchorAt = Math.max(now, this.head.startedAt);
    return this.head;
  }

  /** Prefill tokens still pending at `now` (ms), after decay. */
  activeTokens(now: number): number {
    // Nothing decays (no entry has a duration): the plain sum, without reading the anchor, which a
    // large book keeps far from the cache (one miss per rank per `potential_loads`).
    if (this.unmodeled === this.size) return this.sum;
    const anchor = this.head;
    if (!anchor) return 0;
    const tokens = anchor.prefillTokens;
    const duration = anchor.prefillDurationMs;
    const elapsed = Math.max(0, now - this.anchorTime());
    if (this.unmodeled > 0) {
      let remaining = tokens;
      if (duration === 0) remaining = 0;
      else if (!Number.isNaN(duration)) {
        remaining = Math.ceil(tokens * Math.min(1, Math.max(0, 1 - elapsed / duration)));
      }
      return this.sum - tokens + remaining;
    }
    if (duration === 0) return Math.max(0, this.sum - tokens);
    return Math.max(0, this.sum - Math.floor((tokens * elapsed) / duration));
  }

  /** When the current front became the anchor, ms. */
  anchorTime(): number {
    const head = this.head;
    const departures = this.departures;
    if (!departures || !head) return this.anchorAt;
    if (head !== this.derivedFor || departures.version !== this.derivedVersion) {
      this.derivedAt = Math.max(head.startedAt, departures.lastEndBefore(head.addTs, head.origin));
      this.derivedFor = head;
      this.derivedVersion = departures.version;
    }
    return this.derivedAt;
  }

  /** Empties the queue without touching the entries (the rank was dropped). */
  clear(): void {
    this.head = null;
    this.tail = null;
    this.sum = 0;
    this.unmodeled = 0;
    this.size = 0;
  }
}

function sortsAfter(a: PrefillEntry, b: PrefillEntry): boolean {
  return a.addTs > b.addTs || (a.addTs === b.addTs && a.origin > b.origin);
}
