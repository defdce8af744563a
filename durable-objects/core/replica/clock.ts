/**
 * Ordering of replicated changes. Every change carries a key: a hybrid logical clock time and the
 * replica it was accepted at. Keys are totally ordered by (ts, origin), and a replica's clock is
 * always ahead of every key it has seen, so a change made after seeing another sorts after it.
 */

/** Logical steps per millisecond: HLC times stay exact doubles (now × 1024 < 2^53) until year 2248. */
const STEPS_PER_MS = 1024;

export interface EventKey {
  /** Hybrid logical clock time: physical ms × 1024 plus a logical counter. */
  readonly ts: number;
  /** Name of the replica that accepted the change. */
  readonly origin: string;
}

export function compareKeys(a: EventKey, b: EventKey): number {
  if (a.ts !== b.ts) return a.ts < b.ts ? -1 : 1;
  return a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0;
}

/** Whether `a` sorts after `b` (`b` absent counts as oldest). */
export function isNewer(a: EventKey, b: EventKey | undefined): boolean {
  return b === undefined || compareKeys(a, b) > 0;
}

/** The earliest hybrid clock time of wall-clock ms `ms`: a time is before it iff its ms are. */
export function firstTsOf(ms: number): number {
  return ms * STEPS_PER_MS;
}

/** The wall-clock time of a key, epoch ms. */
export function physicalMs(ts: number): number {
  return Math.floor(ts / STEPS_PER_MS);
}

export class HybridClock {
  private last = 0;

  /** A time after every time seen so far and not before `nowMs`. */
  tick(nowMs: number): number {
    this.last = Math.max(nowMs * STEPS_PER_MS, this.last + 1);
    return this.last;
  }

  /** Moves the clock past a time seen in another replica's change. */
  observe(ts: number): void {
    if (ts > this.last) this.last = ts;
  }
}
