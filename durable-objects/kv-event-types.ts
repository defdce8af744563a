/**
 * Engine KV events as the tracker object takes them over RPC (SPEC §9). The Worker decodes the
 * engines' MessagePack batches (`src/wire/kv-events/`) and hashes each stored block's tokens into
 * Dynamo's public local block hash (reference selection §3.1), so the object, which is one thread
 * for the whole tracker, only applies blocks. Hashes travel as `BigUint64Array`s (one copy, exact).
 */

import type { StorageTier } from "./core/cache-index/cache-index";

/** A run of full blocks an engine stored (`BlockStored`). */
export interface KvStoredOp {
  kind: "stored";
  /** From the event's `medium`: absent or "GPU" is the device (see the decoder for the mapping). */
  tier: StorageTier;
  /** The event's `block_size`, tokens per block (> 0). */
  blockSize: number;
  /** The engine's own block hashes (u64; byte digests folded to their last 8 bytes, big-endian). */
  engineHashes: BigUint64Array;
  /** The engine hash of the block before the first one, or null when the run starts the prompt. */
  parent: bigint | null;
  /** Public local block hashes of the blocks' tokens, one per engine hash, same order. */
  localHashes: BigUint64Array;
}

/** Blocks an engine evicted from one tier (`BlockRemoved`). */
export interface KvRemovedOp {
  kind: "removed";
  tier: StorageTier;
  engineHashes: BigUint64Array;
}

/** The engine dropped everything it held (`AllBlocksCleared`: a prefix-cache reset). */
export interface KvClearedOp {
  kind: "cleared";
}

export type KvOp = KvStoredOp | KvRemovedOp | KvClearedOp;

/** One engine batch (`[ts, events, data_parallel_rank]`), its unknown event kinds already left out. */
export interface KvEventBatch {
  /** The engine's `ts` (float seconds) as epoch ms, rounded; 0 when the batch had none. */
  at: number;
  /** The batch's `data_parallel_rank`, or null when absent or nil. */
  dpRank: number | null;
  ops: KvOp[];
}

/** A `POST /kv_events` call as the object takes it: one (worker, rank)'s batches, in sequence. */
export interface KvEventsInput {
  workerId: bigint;
  dpRank: number;
  /** The publisher's sequence number of the first batch (`x-kv-event-seq`); batch i is `seq + i`. */
  seq: number;
  /** The sender's name for the publisher's life (`x-kv-event-epoch`), 1..128 bytes. */
  epoch: string;
  batches: KvEventBatch[];
}

/** An accepted call: batches applied, batches ignored as repeats, and the sequence number expected next. */
export interface KvEventsAck {
  applied: number;
  ignored: number;
  nextSeq: number;
}

/** One (worker, rank) publisher as `GET /kv_events` lists it. */
export interface KvStreamInfo {
  workerId: bigint;
  dpRank: number;
  /** The current epoch's name (`x-kv-event-epoch`). */
  epoch: string;
  nextSeq: number;
  /** Blocks the rank holds, every tier. */
  cachedBlocks: number;
  /** Delay of the last batch applied here from its engine time, ms; null before one. */
  lagMs: number | null;
}
