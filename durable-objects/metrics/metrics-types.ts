/**
 * What a tracker object reports for `GET /metrics` and `GET /replica_sync/peers`: operation counts,
 * per-rank gauges, replication towards each peer and from each origin.
 */
import type { KvCounters } from "../core/kv-events/kv-state";
import type { ErrorCode, RankLoad, RoutingStats, WorkerType } from "../types";

/** The object's operations as `slot_tracker_requests_total` counts them, named after their routes. */
export type TrackerOp =
  | "register"
  | "unregister"
  | "workers"
  | "add"
  | "prefill_complete"
  | "free"
  | "loads"
  | "potential_loads"
  | "route"
  | "peers"
  | "select"
  | "select_and_reserve"
  | "reservations"
  | "lease"
  | "lease_end"
  | "kv_events";

/** Calls of one operation with one outcome; the Worker maps the outcome to its HTTP status. */
export interface OpCount {
  op: TrackerOp;
  /** `"ok"`, or the code of the failure answered. */
  outcome: "ok" | ErrorCode;
  count: number;
}

/** One rank's load with its worker's type, for the per-rank gauges. */
export interface RankMetrics extends RankLoad {
  /** `"decode"` when the worker registered without a type. */
  workerType: WorkerType;
}

/** Replication towards one peer: counters since the object started, lag as of the call. */
export interface PeerMetrics {
  peer: string;
  state: PeerStatus["state"];
  /** Events the peer acknowledged (stream and snapshot). */
  eventsSent: number;
  /** Snapshot resyncs the peer acknowledged to their final page. */
  resyncs: number;
  /** Events accepted here that the peer has not acknowledged. */
  lagEvents: number;
  /** Age of the oldest unacknowledged event, ms (0 when none). */
  lagMs: number;
}

/** Batches received from one origin replica since the object started. */
export interface OriginCounts {
  origin: string;
  /** Events applied. */
  applied: number;
  /** Events skipped because they had been applied before (retried or duplicated batches). */
  deduplicated: number;
  /** Stream events by delay from their acceptance at the origin to their application here. */
  applyDelay: HistogramCounts;
}

/** Observations by bucket, for a Prometheus histogram. */
export interface HistogramCounts {
  /** Upper bounds of the buckets, ascending, ms. */
  boundsMs: readonly number[];
  /** Observations per bucket, not cumulative: `counts[i]` in (bounds[i-1], bounds[i]]; one more past the last bound. */
  counts: number[];
  /** Sum of the observations, ms. */
  sumMs: number;
}

export interface TrackerMetrics {
  /** When this object instance started counting, epoch ms: counters start from zero there. */
  since: number;
  workers: number;
  liveRequests: number;
  /** One row per registered rank (idle ranks too). */
  ranks: RankMetrics[];
  ops: OpCount[];
  /** Live requests removed by expiry. */
  expiredRequests: number;
  /** Leases live now (SPEC §8). */
  liveLeases: number;
  /** Live bookings of each owner holding at least one. */
  bookingsByOwner: { owner: string; bookings: number }[];
  /** Owned bookings freed because their lease lapsed or was deleted. */
  lapsedBookings: number;
  /** Empty with one replica. */
  peers: PeerMetrics[];
  origins: OriginCounts[];
  /** Rows SQLite reports written by this object instance. */
  rowsWritten: number;
  routing: RoutingStats;
  kv: KvMetrics;
}

/** Engine KV events (SPEC §9): the exact index's size and each publisher's stream. */
export interface KvMetrics {
  /** Counters since the object started (`core/kv-events/kv-state.ts`). */
  counters: KvCounters;
  /** (block, rank) entries the event index holds, and its cap (`MAX_CACHED_BLOCKS`). */
  cachedBlocks: number;
  maxCachedBlocks: number;
  /** One row per (worker, rank) with a stream, sorted by worker then rank. */
  streams: {
    workerId: bigint;
    dpRank: number;
    cachedBlocks: number;
    nextSeq: number;
    /** ms from the engine's batch time to its apply here, last local call; null before one. */
    lagMs: number | null;
  }[];
}

/** Replication towards one peer replica, as `GET /replica_sync/peers` reports it. */
export interface PeerStatus {
  peer: string;
  /** `ok`: streaming; `backing_off`: the last send failed, retrying later; `resync`: catching up by snapshot. */
  state: "ok" | "backing_off" | "resync";
  /** Events accepted here that the peer has not acknowledged. */
  queued: number;
  /** Highest sequence number of this replica's stream the peer has acknowledged. */
  acked: number;
  /** Age of the oldest unacknowledged event, ms (0 when none). */
  oldestUnackedMs: number;
  /** Consecutive failed sends. */
  failures: number;
}
