import type { ReplicaEvent } from "../core/replica/events";

/** What a batch says about itself, apart from its events (see `replicator.ts` for the protocol). */
export interface ReplicaBatchHeader {
  /** Name of the replica that sent the batch (its events may carry other origins in a snapshot). */
  origin: string;
  /** Changes when the sender's storage starts over, so its sequence numbers are never confused. */
  incarnation: string;
  kind: "stream" | "snapshot";
  /** Stream: sequence number of the first event. Snapshot: unused (0). Non-negative integer. */
  firstSeq: number;
  /** Snapshot: the stream resumes after this sequence number once `final` is acknowledged. */
  upTo: number;
  /** Snapshot: the last page. */
  final: boolean;
}

/** One RPC's worth of replicated changes, shipped as MessagePack by `event-codec.ts`. */
export interface ReplicaBatch extends ReplicaBatchHeader {
  events: ReplicaEvent[];
}

/** A batch on the wire (encoded by `event-codec.ts`), its events as log entries. */
export interface OutgoingBatch<E> extends ReplicaBatchHeader {
  events: E[];
  /** The sender's rewind count for the peer when it was sent (not on the wire): older answers are stale. */
  epoch: number;
}

/** A receiver's answer: the highest sequence number of this origin it has applied. */
export interface BatchReply {
  status: "ok" | "gap";
  applied: number;
}

/** The durable log of this replica's events, oldest first. */
export interface EventLog<E> {
  append(seq: number, entry: E, at: number): void;
  /** Up to `max` entries with sequence numbers after `afterSeq`, in order. */
  read(afterSeq: number, max: number): { seq: number; entry: E }[];
  /** Drops entries with sequence numbers up to `seq`. */
  trim(seq: number): void;
  /** When the entry `seq` was appended, epoch ms, if it is still held. */
  appendedAt(seq: number): number | undefined;
  /** Sequence number of the oldest entry held, or `last + 1` when none is. */
  oldest(): number;
}

export interface ReplicatorOptions<E> {
  origin: string;
  /** Changes when the replica's storage starts over, so peers never mistake its sequence numbers. */
  incarnation: string;
  peers: string[];
  log: EventLog<E>;
  /** Encodes a snapshot event as a log entry. */
  encode: (event: ReplicaEvent) => E;
  /** Source of this replica's whole state as events, for a snapshot resync. */
  snapshot: () => Iterator<ReplicaEvent>;
  /** Delay from the first queued event to its shipping, ms (`REPLICA_FLUSH_MS`). */
  flushMs: number;
  maxBatch?: number;
  /**
   * Bytes of one batch's entries at most (a batch holds one entry at least, whatever its size), with
   * `sizeOf` to measure an entry: KV-event entries are large, and an RPC carries at most 32 MiB.
   */
  maxBatchBytes?: number;
  sizeOf?: (entry: E) => number;
  /** Stream batches one peer may have in flight at once (snapshot pages go one at a time). */
  maxInFlight?: number;
  /** Unacknowledged events a peer may fall behind by before it is resynced by snapshot. */
  maxBacklog?: number;
  /** Random source in [0, 1) for backoff jitter. */
  random?: () => number;
  /** Highest sequence number already used (restored from storage). */
  lastSeq?: number;
}
