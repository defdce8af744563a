/**
 * What the replication benchmark reads of the two replicas, over the Worker's public routes only:
 * the origin's stream position towards its peer (`GET /replica_sync/peers`) and the peer's
 * applied-events counter and apply-delay histogram (`GET /metrics`), and the figures their
 * differences over a window give.
 */
import { parsePrometheus, select, sampleValue } from "../../test/workers/prometheus-text";
import { MODEL } from "../http/bodies";

export const ORIGIN = "east";
export const PEER = "west";
const DELAY = "slot_tracker_replication_apply_delay_seconds";

/** The origin's stream towards the peer, as `/replica_sync/peers` at the origin reports it. */
export interface Stream {
  state: string;
  /** Events accepted at the origin so far: its last sequence number. */
  accepted: number;
  /** Events the peer has not acknowledged. */
  queued: number;
}

/** The peer's counters for the origin's stream. */
export interface Applied {
  /** Events of the origin applied at the peer since the peer's object started. */
  applied: number;
  deduplicated: number;
  /** Cumulative counts by bucket upper bound, ms (the last `Infinity`). */
  buckets: { leMs: number; count: number }[];
  /** Sum of the delays, ms. */
  sumMs: number;
}

async function get(url: string, path: string, replica: string): Promise<Response> {
  const res = await fetch(`${url}${path.slice(1)}`, { headers: { "x-slot-tracker-replica": replica } });
  if (!res.ok) throw new Error(`GET ${path} at ${replica}: ${res.status} ${await res.text()}`);
  return res;
}

export async function readStream(url: string): Promise<Stream> {
  const res = await get(url, `/replica_sync/peers?model_name=${MODEL}`, ORIGIN);
  const { peers } = (await res.json()) as {
    peers: { peer: string; state: string; queued_events: number; last_acked_seq: number }[];
  };
  const row = peers.find((p) => p.peer === PEER);
  if (!row) throw new Error(`${ORIGIN} reports no peer ${PEER}: ${JSON.stringify(peers)}`);
  return { state: row.state, accepted: row.last_acked_seq + row.queued_events, queued: row.queued_events };
}

export async function readApplied(url: string): Promise<Applied> {
  const text = await (await get(url, `/metrics?model_name=${MODEL}&replica=${PEER}`, PEER)).text();
  const parsed = parsePrometheus(text);
  const where = { origin: ORIGIN };
  const buckets = select(parsed, `${DELAY}_bucket`, where)
    .map((s) => ({ leMs: s.labels.le === "+Inf" ? Infinity : Number(s.labels.le) * 1000, count: s.value }))
    .sort((a, b) => a.leMs - b.leMs);
  return {
    applied: sampleValue(parsed, "slot_tracker_replication_events_applied_total", where) ?? 0,
    deduplicated: sampleValue(parsed, "slot_tracker_replication_events_deduplicated_total", where) ?? 0,
    buckets,
    sumMs: (sampleValue(parsed, `${DELAY}_sum`, where) ?? 0) * 1000,
  };
}

/** Snapshot resyncs of the peer the origin completed (a stream figure must not include any). */
export async function resyncs(url: string): Promise<number> {
  const text = await (await get(url, `/metrics?model_name=${MODEL}&replica=${ORIGIN}`, ORIGIN)).text();
  return sampleValue(parsePrometheus(text), "slot_tracker_replication_resyncs_total", { peer: PEER }) ?? 0;
}

/**
 * Delay quantiles of the events applied between two readings, as the upper bound of the bucket the
 * quantile falls in (a histogram holds no finer figure), and the exact mean from the sums.
 */
export function delaysBetween(
  before: Applied,
  after: Applied,
): { events: number; p50MsUpperBound: number; p99MsUpperBound: number; meanMs: number } {
  const counts = after.buckets.map((b, i) => ({
    leMs: b.leMs,
    count: b.count - (before.buckets[i]?.count ?? 0),
  }));
  const events = counts.at(-1)?.count ?? 0;
  if (events === 0) throw new Error("no replication delay observed in the window");
  const bound = (q: number) => {
    const found = counts.find((b) => b.count >= q * events)!;
    if (!Number.isFinite(found.leMs))
      throw new Error(`the p${q * 100} delay is past the histogram's last bound`);
    return found.leMs;
  };
  return {
    events,
    p50MsUpperBound: bound(0.5),
    p99MsUpperBound: bound(0.99),
    meanMs: (after.sumMs - before.sumMs) / events,
  };
}
