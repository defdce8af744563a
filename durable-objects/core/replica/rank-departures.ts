/**
 * When each prefill entry of one rank left the rank's FIFO, by booking key (hybrid clock time, then
 * origin), and the latest of those moments among the entries booked before a given key: what a
 * replicated tracker derives a prefill anchor from (`departure-log.ts`, `prefill-queue.ts`).
 *
 * Parallel arrays sorted by key, with a prefix maximum of the ends kept valid up to `validTo`.
 * Departures of recent bookings land near the end, so a query recomputes only a short tail. The
 * prefix maximum, rather than a staircase that drops dominated departures, because an end can still
 * move earlier (a completion that arrives after the free it preceded), and a dropped departure
 * could not come back.
 */
export class RankDepartures {
  private ts = new Float64Array(16);
  private ends = new Float64Array(16);
  private maxes = new Float64Array(16);
  private origins: string[] = [];
  private size = 0;
  /** `maxes[i]` holds the maximum of `ends[0..i]` for every `i < validTo`. */
  private validTo = 0;
  /** Changes whenever an answer may change, so a prefill queue can cache its anchor by it. */
  version = 0;

  get length(): number {
    return this.size;
  }

  /** Records the entry booked at (`ts`, `origin`) as ended at `end`, or lowers its known end to it. */
  set(ts: number, origin: string, end: number): void {
    const i = this.lowerBound(ts, origin);
    if (i < this.size && this.ts[i] === ts && this.origins[i] === origin) {
      if (end < this.ends[i]!) this.changed(i, end);
      return;
    }
    if (this.size === this.ts.length) this.grow();
    this.ts.copyWithin(i + 1, i, this.size);
    this.ends.copyWithin(i + 1, i, this.size);
    this.origins.splice(i, 0, origin);
    this.ts[i] = ts;
    this.size++;
    this.changed(i, end);
  }

  /** Lowers the end of a known entry to `end`; an unknown entry stays unknown. */
  lower(ts: number, origin: string, end: number): void {
    const i = this.lowerBound(ts, origin);
    if (i < this.size && this.ts[i] === ts && this.origins[i] === origin && end < this.ends[i]!) {
      this.changed(i, end);
    }
  }

  /** The latest end among entries booked before (`ts`, `origin`); -Infinity when there is none. */
  lastEndBefore(ts: number, origin: string): number {
    const n = this.lowerBound(ts, origin);
    if (n === 0) return Number.NEGATIVE_INFINITY;
    if (n > this.validTo) {
      let max = this.validTo === 0 ? Number.NEGATIVE_INFINITY : this.maxes[this.validTo - 1]!;
      for (let i = this.validTo; i < n; i++) {
        max = Math.max(max, this.ends[i]!);
        this.maxes[i] = max;
      }
      this.validTo = n;
    }
    return this.maxes[n - 1]!;
  }

  /** Forgets the entries booked before (`ts`, `origin`): a newer registration of the worker ended them. */
  dropBefore(ts: number, origin: string): void {
    const n = this.lowerBound(ts, origin);
    if (n === 0) return;
    this.ts.copyWithin(0, n, this.size);
    this.ends.copyWithin(0, n, this.size);
    this.origins.splice(0, n);
    this.size -= n;
    this.validTo = 0;
    this.version++;
  }

  /** Forgets the entries that ended before `horizon`: no live booking started that early. */
  prune(horizon: number): void {
    let kept = 0;
    for (let i = 0; i < this.size; i++) {
      if (this.ends[i]! < horizon) continue;
      this.ts[kept] = this.ts[i]!;
      this.ends[kept] = this.ends[i]!;
      this.origins[kept] = this.origins[i]!;
      kept++;
    }
    if (kept === this.size) return;
    this.origins.length = kept;
    this.size = kept;
    this.validTo = 0;
    this.version++;
  }

  private changed(i: number, end: number): void {
    this.ends[i] = end;
    if (i < this.validTo) this.validTo = i;
    this.version++;
  }

  /** Index of the first entry whose key is not below (`ts`, `origin`). */
  private lowerBound(ts: number, origin: string): number {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.ts[mid]!;
      if (t < ts || (t === ts && this.origins[mid]! < origin)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private grow(): void {
    const capacity = this.ts.length * 2;
    for (const name of ["ts", "ends", "maxes"] as const) {
      const next = new Float64Array(capacity);
      next.set(this[name]);
      this[name] = next;
    }
  }
}
