/**
 * Counters a tracker object keeps for `GET /metrics`. They live in the object's memory only: they
 * start at zero when the object starts (after a deploy, an eviction or a crash), which Prometheus
 * reads as a counter reset and `rate()`/`increase()` handle. Persisting them would add a SQLite write
 * to every operation for figures that tolerate resets by design.
 */
import type { ErrorCode, OpCount, OriginCounts, TrackerOp } from "./types";

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

/** Replication traffic of one object, by peer (sending side) and by origin (receiving side). */
export class ReplicationCounters {
  /** Events a peer acknowledged, stream and snapshot pages alike. */
  private readonly sentTo = new Map<string, number>();
  /** Snapshot resyncs a peer acknowledged to the end. */
  private readonly resyncsOf = new Map<string, number>();
  private readonly fromOrigin = new Map<string, OriginCounts>();

  sent(peer: string, events: number): void {
    this.sentTo.set(peer, (this.sentTo.get(peer) ?? 0) + events);
  }

  resynced(peer: string): void {
    this.resyncsOf.set(peer, (this.resyncsOf.get(peer) ?? 0) + 1);
  }

  /** A batch from `origin` whose first `skipped` events had been applied before (retries, duplicates). */
  received(origin: string, applied: number, skipped: number): void {
    const counts = this.fromOrigin.get(origin) ?? { origin, applied: 0, deduplicated: 0 };
    counts.applied += applied;
    counts.deduplicated += skipped;
    this.fromOrigin.set(origin, counts);
  }

  sentCount(peer: string): number {
    return this.sentTo.get(peer) ?? 0;
  }

  resyncCount(peer: string): number {
    return this.resyncsOf.get(peer) ?? 0;
  }

  origins(): OriginCounts[] {
    return [...this.fromOrigin.values()].map((counts) => ({ ...counts }));
  }
}
