import type { ReplicaEvent } from "../core/events";

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
