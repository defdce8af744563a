/**
 * Renders what the tracker objects report (`TrackerMetrics`) as Prometheus families. Every series
 * carries `replica`, `model` and `tenant`: one scrape covers one replica, and a Prometheus that
 * scrapes several replicas of the same URL must still tell their series apart.
 */

import type { TrackerMetrics, TrackerOp } from "../../durable-objects/metrics/metrics-types";
import type { TrackerKey } from "../../durable-objects/types";
import { httpErrorOf } from "../http/errors";
import type { Exposition, Labels } from "./exposition";

export interface Scraped {
  key: TrackerKey;
  metrics: TrackerMetrics;
}

/** The HTTP route each counted operation answers. */
const ROUTE_OF_OP: Record<TrackerOp, string> = {
  register: "/register",
  unregister: "/unregister",
  workers: "/workers",
  add: "/add",
  prefill_complete: "/prefill_complete",
  free: "/free",
  loads: "/loads",
  potential_loads: "/potential_loads",
  route: "/route",
  peers: "/replica_sync/peers",
  select: "/selection/select",
  select_and_reserve: "/selection/select_and_reserve",
  reservations: "/selection/reservations",
  // Either API's lease writes (`/selection/leases` too), under the slot-tracker API's paths. The
  // listing is not counted: it shares its path with the renewal, and its series would merge.
  lease: "/leases",
  lease_end: "/leases/{owner}",
  // Either API's (`/selection/kv_events` too).
  kv_events: "/kv_events",
};

/** Dynamo answers writes that create something with 201. */
const CREATED: ReadonlySet<TrackerOp> = new Set(["register", "add", "route", "reservations"]);

function statusOf(op: TrackerOp, outcome: TrackerMetrics["ops"][number]["outcome"]): number {
  if (outcome === "ok") return CREATED.has(op) ? 201 : 200;
  return httpErrorOf({ code: outcome, message: "" }).status;
}

export function renderTracker(out: Exposition, { key, metrics: m }: Scraped): void {
  const tracker: Labels = { replica: key.replica, model: key.model, tenant: key.tenant };
  for (const rank of m.ranks) {
    const labels = { ...tracker, worker_id: rank.workerId, dp_rank: rank.dpRank };
    out.gauge(
      "slot_tracker_active_decode_blocks",
      "Distinct KV blocks held by the live requests of a worker rank.",
      labels,
      rank.activeDecodeBlocks,
    );
    out.gauge(
      "slot_tracker_active_prefill_tokens",
      "Prompt tokens still waiting for prefill on a worker rank (after decay, if any).",
      labels,
      rank.activePrefillTokens,
    );
  }
  // The same gauges under the names Dynamo's frontend exports, for existing dashboards.
  for (const rank of m.ranks) {
    const labels = {
      ...tracker,
      worker_id: rank.workerId,
      dp_rank: rank.dpRank,
      worker_type: rank.workerType,
    };
    out.gauge(
      "dynamo_frontend_worker_active_decode_blocks",
      "Alias of slot_tracker_active_decode_blocks under Dynamo's frontend metric name.",
      labels,
      rank.activeDecodeBlocks,
    );
    out.gauge(
      "dynamo_frontend_worker_active_prefill_tokens",
      "Alias of slot_tracker_active_prefill_tokens under Dynamo's frontend metric name.",
      labels,
      rank.activePrefillTokens,
    );
  }
  out.gauge("slot_tracker_live_requests", "Live requests of a tracker.", tracker, m.liveRequests);
  out.gauge("slot_tracker_registered_workers", "Workers registered with a tracker.", tracker, m.workers);
  out.gauge(
    "slot_tracker_start_time_seconds",
    "When the tracker object started counting (its counters reset then), Unix seconds.",
    tracker,
    m.since / 1000,
  );
  renderOps(out, tracker, m);
  out.counter(
    "slot_tracker_expired_requests_total",
    "Live requests removed by expiry (REQUEST_EXPIRY_SECONDS).",
    tracker,
    m.expiredRequests,
  );
  out.gauge("slot_tracker_live_leases", "Frontend leases live now.", tracker, m.liveLeases);
  for (const { owner, bookings } of m.bookingsByOwner) {
    out.gauge(
      "slot_tracker_owned_bookings",
      "Live bookings an owner's lease holds.",
      { ...tracker, owner },
      bookings,
    );
  }
  out.counter(
    "slot_tracker_lease_freed_bookings_total",
    "Owned bookings freed because their lease lapsed or was deleted.",
    tracker,
    m.lapsedBookings,
  );
  out.counter(
    "slot_tracker_sqlite_rows_written_total",
    "Rows SQLite reports written by the tracker object.",
    tracker,
    m.rowsWritten,
  );
  renderReplication(out, tracker, m);
  renderRouting(out, tracker, m);
  renderKv(out, tracker, m);
}

function renderKv(out: Exposition, tracker: Labels, m: TrackerMetrics): void {
  const { kv } = m;
  for (const s of kv.streams) {
    const labels = { ...tracker, worker_id: s.workerId, dp_rank: s.dpRank };
    out.gauge(
      "slot_tracker_kv_cached_blocks",
      "Blocks a worker rank holds in its KV cache, from its engine's KV events (every tier).",
      labels,
      s.cachedBlocks,
    );
    out.gauge(
      "slot_tracker_kv_next_seq",
      "The KV-event sequence number the tracker expects next from a worker rank's publisher.",
      labels,
      s.nextSeq,
    );
    if (s.lagMs !== null) {
      out.gauge(
        "slot_tracker_kv_event_lag_seconds",
        "Delay from the engine's batch time to its apply here, for the last POST /kv_events of a worker rank.",
        labels,
        s.lagMs / 1000,
      );
    }
  }
  const c = kv.counters;
  out.gauge(
    "slot_tracker_kv_index_blocks",
    "(Block, rank) entries of the engine-event index.",
    tracker,
    kv.cachedBlocks,
  );
  out.gauge(
    "slot_tracker_kv_index_max_blocks",
    "The engine-event index's cap (MAX_CACHED_BLOCKS).",
    tracker,
    kv.maxCachedBlocks,
  );
  for (const [outcome, count] of [
    ["applied", c.batchesApplied],
    ["repeated", c.batchesIgnored],
  ] as const) {
    out.counter(
      "slot_tracker_kv_batches_total",
      "Engine KV-event batches applied, or acknowledged as repeats of applied sequence numbers.",
      { ...tracker, outcome },
      count,
    );
  }
  out.counter(
    "slot_tracker_kv_sequence_gaps_total",
    "POST /kv_events calls refused as out of sequence (409 with expected_seq).",
    tracker,
    c.gaps,
  );
  out.counter(
    "slot_tracker_kv_epochs_total",
    "KV-event epochs started or adopted (each clears its rank).",
    tracker,
    c.epochs,
  );
  for (const [change, count] of [
    ["stored", c.blocksStored],
    ["removed", c.blocksRemoved],
    ["orphaned", c.blocksOrphaned],
    ["evicted", c.blocksEvicted],
  ] as const) {
    out.counter(
      "slot_tracker_kv_blocks_total",
      "Blocks the engine-event index stored, removed, refused for an unknown parent (orphaned) or evicted at its cap.",
      { ...tracker, change },
      count,
    );
  }
}

function renderOps(out: Exposition, tracker: Labels, m: TrackerMetrics): void {
  // Outcomes with the same status (two 404 codes, say) are one series.
  const totals = new Map<string, { route: string; status: number; count: number }>();
  for (const { op, outcome, count } of m.ops) {
    const route = ROUTE_OF_OP[op] ?? `/${op}`;
    const status = statusOf(op, outcome);
    const id = `${route} ${status}`;
    const total = totals.get(id) ?? { route, status, count: 0 };
    total.count += count;
    totals.set(id, total);
  }
  for (const { route, status, count } of totals.values()) {
    out.counter(
      "slot_tracker_requests_total",
      "Operations the tracker object answered, by route and HTTP status (requests refused before reaching it are not counted).",
      { ...tracker, route, status },
      count,
    );
  }
}

function renderReplication(out: Exposition, tracker: Labels, m: TrackerMetrics): void {
  for (const p of m.peers) {
    const labels = { ...tracker, peer: p.peer };
    out.counter(
      "slot_tracker_replication_events_sent_total",
      "Replication events a peer replica acknowledged.",
      labels,
      p.eventsSent,
    );
    out.counter(
      "slot_tracker_replication_resyncs_total",
      "Snapshot resyncs of a peer completed.",
      labels,
      p.resyncs,
    );
    out.gauge(
      "slot_tracker_replication_peer_lag_events",
      "Events accepted here that the peer has not acknowledged.",
      labels,
      p.lagEvents,
    );
    out.gauge(
      "slot_tracker_replication_peer_lag_seconds",
      "Age of the oldest event the peer has not acknowledged (0 when none).",
      labels,
      p.lagMs / 1000,
    );
    out.gauge(
      "slot_tracker_replication_peer_state",
      "1 for the peer's current replication state (ok, backing_off, resync).",
      { ...labels, state: p.state },
      1,
    );
  }
  for (const o of m.origins) {
    const labels = { ...tracker, origin: o.origin };
    out.counter(
      "slot_tracker_replication_events_applied_total",
      "Replication events from an origin replica applied here.",
      labels,
      o.applied,
    );
    out.counter(
      "slot_tracker_replication_events_deduplicated_total",
      "Replication events from an origin skipped as already applied (retries, duplicates).",
      labels,
      o.deduplicated,
    );
    out.histogram(
      "slot_tracker_replication_apply_delay_seconds",
      "Delay of a replication event from its acceptance at the origin (its clock) to its application here (this replica's clock); stream events only.",
      labels,
      {
        bounds: o.applyDelay.boundsMs.map((ms) => ms / 1000),
        counts: o.applyDelay.counts,
        sum: o.applyDelay.sumMs / 1000,
      },
    );
  }
}

function renderRouting(out: Exposition, tracker: Labels, m: TrackerMetrics): void {
  for (const hop of ["decode", "prefill"] as const) {
    const stats = m.routing[hop];
    out.counter(
      "slot_tracker_route_conflicts_total",
      "/route calls that resolved a worker set whose router_config advertisements disagreed.",
      { ...tracker, hop },
      stats.conflictedRoutes,
    );
    out.gauge(
      "slot_tracker_route_disagreeing_cards",
      "Workers whose router_config differs from the deciding (first registered) one.",
      { ...tracker, hop },
      stats.disagreeingCards,
    );
  }
  out.gauge(
    "slot_tracker_session_bindings",
    "Live session affinity bindings.",
    tracker,
    m.routing.sessionBindings,
  );
}
