/**
 * Helpers for the KV-event tests: engine batches built as vLLM publishes them on ZMQ (reference
 * `engine-kv-events.md` §1: `[ts, events, data_parallel_rank]`, events as tagged arrays), posted to
 * `/kv_events` through the Worker. Block `b` of a prompt is tokens `4b − 3 ..= 4b` (block size 4), so
 * the blocks of `range(1, 4k)` are 1..k.
 */
import { encode } from "@msgpack/msgpack";
import { BLOCK_SIZE, type Partition } from "./booking-http";
import { type Answer, send } from "./reliability-http";

export type EngineEvent = unknown[];

/** Tokens of blocks `blocks`. */
export function tokensOf(blocks: number[]): number[] {
  return blocks.flatMap((b) => Array.from({ length: BLOCK_SIZE }, (_, i) => BLOCK_SIZE * (b - 1) + i + 1));
}

/** The engine's hash of block `b` (any u64 works: the tracker keys blocks by their tokens). */
export function engineHash(b: number): bigint {
  return 0x9e37_79b9_7f4a_7c15n ^ BigInt(b);
}

/** vLLM's `BlockStored` (v0.11 layout: medium and lora_name present), under `parent` (a block) or the root. */
export function blockStored(blocks: number[], parent: number | null = null, medium = "GPU"): EngineEvent {
  const parentHash = parent === null ? null : engineHash(parent);
  return [
    "BlockStored",
    blocks.map(engineHash),
    parentHash,
    tokensOf(blocks),
    BLOCK_SIZE,
    null,
    medium,
    null,
  ];
}

export function blockRemoved(blocks: number[], medium = "GPU"): EngineEvent {
  return ["BlockRemoved", blocks.map(engineHash), medium];
}

/** One engine batch's bytes: `[ts, events, data_parallel_rank]`. */
export function engineBatch(events: EngineEvent[], dpRank = 0, ts = Date.now() / 1000): Uint8Array {
  return encode([ts, events, dpRank], { useBigInt64: true });
}

/** Batches concatenated, as a relay posts consecutive ZMQ payloads. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export interface KvCall {
  workerId: bigint;
  seq: number;
  epoch?: string;
  dpRank?: number;
  replica?: string;
  headers?: Record<string, string>;
  path?: string;
}

export function postKv(p: Partition, call: KvCall, body: Uint8Array): Promise<Answer> {
  const query = new URLSearchParams({
    model_name: p.model,
    routing_group: p.group,
    worker_id: String(call.workerId),
  });
  if (call.dpRank !== undefined) query.set("dp_rank", String(call.dpRank));
  return send("POST", `${call.path ?? "/kv_events"}?${query}`, {
    body,
    headers: {
      "content-type": "application/msgpack",
      "x-kv-event-seq": String(call.seq),
      "x-kv-event-epoch": call.epoch ?? "epoch-1",
      ...(call.replica === undefined ? {} : { "x-slot-tracker-replica": call.replica }),
      ...call.headers,
    },
  });
}
