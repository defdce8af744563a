/** What a sender keeps per peer (`replicator.ts`), and its retry backoff. */
import type { ReplicaEvent } from "../core/replica/events";
import type { PeerStatus } from "../metrics/metrics-types";

export type PeerState = PeerStatus["state"];

export interface Peer {
  name: string;
  acked: number;
  /** Highest sequence number sent in a batch still in flight (at least `acked`). */
  sent: number;
  state: PeerState;
  /** Batches sent since the last rewind and not yet answered. */
  inFlight: number;
  /**
   * Rewinds so far (a failure, a gap, a resync): batches sent before the last one are forgotten,
   * and their late answers ignored (the receiver's later answers cover what they did).
   */
  epoch: number;
  failures: number;
  retryAt: number;
  /** When the oldest event not yet sent was queued (flush deadline = this + flushMs). */
  queuedSince: number | null;
  resync: { source: Iterator<ReplicaEvent>; upTo: number } | null;
}

const BASE_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 30_000;
const OVERLOAD_BACKOFF_MS = 1_000;

export function newPeer(name: string): Peer {
  return {
    name,
    acked: 0,
    sent: 0,
    state: "ok",
    inFlight: 0,
    epoch: 0,
    failures: 0,
    retryAt: 0,
    queuedSince: null,
    resync: null,
  };
}

/** Delay before the next try after `failures` in a row: capped exponential, full jitter. */
export function backoffMs(failures: number, overloaded: boolean, random: () => number): number {
  const cap = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.min(failures - 1, 20));
  return Math.max(overloaded ? OVERLOAD_BACKOFF_MS : 0, Math.floor(random() * cap) + 1);
}
