/**
 * `metrics/`: what a tracker object counts and reports. The report (this file), the in-memory
 * counters (`metrics-counters.ts`) and the shapes both travel in (`metrics-types.ts`); the Worker
 * writes them as Prometheus text (`src/metrics/`).
 *
 * What `GET /metrics` reports of one tracker object, gathered from its parts in one synchronous step:
 * workers and per-rank gauges, operation counts, expiries, replication towards each peer and from
 * each origin, rows written and routing state. Counters count since the object instance started.
 */
import type { RoutingState } from "../core/routing/route-request";
import { routingStatsOf } from "../core/routing/route-request";
import type { Tracker } from "../core/tracker";
import type { OpCounters, ReplicationCounters } from "./metrics-counters";
import type { KvMetrics, PeerStatus, TrackerMetrics } from "./metrics-types";

/**
 * What the report reads of replication, declared here so that metrics, below replication, imports
 * nothing of it (`replication/peer-sync.ts` is the one implementation).
 */
export interface ReplicationSource {
  readonly counters: ReplicationCounters;
  status(now: number): PeerStatus[];
}

export interface MetricsSources {
  tracker: Tracker;
  routing: RoutingState;
  /** Absent with one replica. */
  sync: ReplicationSource | null;
  ops: OpCounters;
  /** When the object instance started counting, epoch ms. */
  startedAt: number;
  rowsWritten: number;
}

export function metricsReport(sources: MetricsSources, now: number): TrackerMetrics {
  const { tracker, routing, sync, ops } = sources;
  const routingStats = routingStatsOf(tracker, routing, now);
  const types = new Map(tracker.listWorkers(now).map((w) => [w.workerId, w.workerType ?? "decode"]));
  const counters = sync?.counters;
  return {
    since: sources.startedAt,
    workers: types.size,
    liveRequests: tracker.liveRequests,
    ranks: tracker
      .listLoads(now)
      .map((load) => ({ ...load, workerType: types.get(load.workerId) ?? "decode" })),
    ops: ops.snapshot(),
    expiredRequests: tracker.expiredCount,
    liveLeases: tracker.leases.liveCount(now),
    bookingsByOwner: [...tracker.leases.bookingsByOwner()]
      .map(([owner, bookings]) => ({ owner, bookings }))
      .sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0)),
    lapsedBookings: tracker.lapsedCount,
    peers: (sync?.status(now) ?? []).map((p) => ({
      peer: p.peer,
      state: p.state,
      eventsSent: counters?.sentCount(p.peer) ?? 0,
      resyncs: counters?.resyncCount(p.peer) ?? 0,
      lagEvents: p.queued,
      lagMs: p.oldestUnackedMs,
    })),
    origins: counters?.origins() ?? [],
    rowsWritten: sources.rowsWritten,
    routing: routingStats,
    kv: kvMetricsOf(tracker),
  };
}

function kvMetricsOf(tracker: Tracker): KvMetrics {
  const { kv } = tracker;
  const stats = kv.index.stats();
  const streams = kv.list().map(({ epoch: _epoch, ...stream }) => stream);
  return {
    counters: { ...kv.counters },
    cachedBlocks: stats.entries,
    maxCachedBlocks: stats.maxEntries,
    streams,
  };
}
