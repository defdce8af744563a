/**
 * Counters a tracker object keeps for `GET /metrics`. They live in the object's memory only: they
 * start at zero when the object starts (after a deploy, an eviction or a crash), which Prometheus
 * reads as a counter reset and `rate()`/`increase()` handle. Persisting them would add a SQLite write
 * to every operation for figures that tolerate resets by design.
 */
import type { ErrorCode } from "../types";
import type { HistogramCounts, OpCount, OriginCounts, TrackerOp } from "./metrics-types";

/** Calls of the object's RPC methods, by operation and outcome (`"ok"` or the failure's code). */
export class OpCounters {
  private readonly counts = new Map<TrackerOp, Map<"ok" | ErrorCode, number>>();

  /** Counts one call of `op` that answered `value`: a failed `Result` by its code, anything else as ok. */
  record(op: TrackerOp, value: unknown): void {
    const outcome = failureCodeOf(value) ?? "ok";
    let byOutcome = this.counts.get(op);
    if (!byOutcome) {
      byOutcome = new Map();
      this.counts.set(op, byOutcome);
    }
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
  }

  snapshot(): OpCount[] {
    const rows: OpCount[] = [];
    for (const [op, byOutcome] of this.counts) {
      for (const [outcome, count] of byOutcome) rows.push({ op, outcome, count });
    }
    return rows;
  }
}

function failureCodeOf(value: unknown): ErrorCode | undefined {
  if (typeof value !== "object" || value === null || !("ok" in value) || value.ok !== false) return undefined;
  return "code" in value ? (value.code as ErrorCode) : undefined;
}

/**
 * Bucket bounds of the replication apply delay, ms: fine from 1 ms to a few hundred, where the
 * delay of a healthy stream lies (`REPLICA_FLUSH_MS`, 10 by default, plus the peer call), then
 * coarse up to a minute, where a peer that fell behind shows.
 */
export const APPLY_DELAY_BOUNDS_MS: readonly number[] = [
  1, 2, 5, 10, 20, 30, 40, 50, 60, 80, 100, 150, 200, 300, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000,
];

/** A Prometheus histogram's state: observations by bucket (upper bounds inclusive) and their sum. */
export class Histogram {
  private readonly counts: number[];
  private sum = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i] = this.counts[i]! + 1;
    this.sum += value;
  }

  snapshot(): HistogramCounts {
    return { boundsMs: this.bounds, counts: [...this.counts], sumMs: this.sum };
  }
}

/** One origin's counters, its histogram live. */
type OriginCounters = Omit<OriginCounts, "applyDelay"> & { applyDelay: Histogram };

/** Replication traffic of one object, by peer (sending side) and by origin (receiving side). */
export class ReplicationCounters {
  /** Events a peer acknowledged, stream and snapshot pages alike. */
  private readonly sentTo = new Map<string, number>();
  /** Snapshot resyncs a peer acknowledged to the end. */
  private readonly resyncsOf = new Map<string, number>();
  private readonly fromOrigin = new Map<string, OriginCounters>();

  sent(peer: string, events: number): void {
    this.sentTo.set(peer, (this.sentTo.get(peer) ?? 0) + events);
  }

  resynced(peer: string): void {
    this.resyncsOf.set(peer, (this.resyncsOf.get(peer) ?? 0) + 1);
  }

  /** A batch from `origin` whose first `skipped` events had been applied before (retries, duplicates). */
  received(origin: string, applied: number, skipped: number): void {
    const counts = this.countersOf(origin);
    counts.applied += applied;
    counts.deduplicated += skipped;
  }

  /** Where the delays of `origin`'s stream events are observed, from acceptance there to application here, ms. */
  applyDelays(origin: string): Histogram {
    return this.countersOf(origin).applyDelay;
  }

  sentCount(peer: string): number {
    return this.sentTo.get(peer) ?? 0;
  }

  resyncCount(peer: string): number {
    return this.resyncsOf.get(peer) ?? 0;
  }

  origins(): OriginCounts[] {
    return [...this.fromOrigin.values()].map(({ applyDelay, ...counts }) => ({
      ...counts,
      applyDelay: applyDelay.snapshot(),
    }));
  }

  private countersOf(origin: string): OriginCounters {
    let counts = this.fromOrigin.get(origin);
    if (!counts) {
      counts = { origin, applied: 0, deduplicated: 0, applyDelay: new Histogram(APPLY_DELAY_BOUNDS_MS) };
      this.fromOrigin.set(origin, counts);
    }
    return counts;
  }
}
