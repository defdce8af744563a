/**
 * Building engine KV-event bodies for the decoder's tests: MessagePack as msgspec lays it out (smallest
 * integer forms, float64 for `ts`, maps in declaration order), through the project's own encoder.
 */
import { encode } from "@msgpack/msgpack";
import { expect } from "vitest";
import { decodeKvEventBody, type KvDecodeOptions, type KvDecodeResult } from "../../src/wire/kv-events";
import type { KvEventBatch, KvOp } from "../../durable-objects/kv-event-types";

export const TS = 1757500000.25;

/** One MessagePack value per argument, concatenated: several batches in one body. */
export function pack(...values: unknown[]): Uint8Array {
  const parts = values.map((value) => encode(value, { useBigInt64: true }));
  const body = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.length;
  }
  return body;
}

export function hex(text: string): Uint8Array {
  return Uint8Array.from(text.match(/../g) ?? [], (byte) => Number.parseInt(byte, 16));
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

export type Decoded = KvDecodeResult & { ok: true };

export function decoded(body: Uint8Array, options: KvDecodeOptions = {}): Decoded {
  const result = decodeKvEventBody(body, options);
  if (!result.ok) throw new Error(`refused: ${result.status} ${result.error}`);
  return result;
}

/** The ops of a one-batch body. */
export function opsOf(body: Uint8Array, options: KvDecodeOptions = {}): KvOp[] {
  const { batches } = decoded(body, options);
  expect(batches).toHaveLength(1);
  return (batches[0] as KvEventBatch).ops;
}

/** The one op of a one-event body, or null when the event was skipped. */
export function onlyOp(event: unknown): KvOp | null {
  const result = decoded(pack([TS, [event], 0]));
  expect(result.events).toBe(1);
  const ops = result.batches[0]!.ops;
  expect(ops.length + result.skipped).toBe(1);
  return ops[0] ?? null;
}

export function refusal(body: Uint8Array, options: KvDecodeOptions = {}): { status: number; error: string } {
  const result = decodeKvEventBody(body, options);
  if (result.ok) throw new Error("decoded");
  return { status: result.status, error: result.error };
}

/** A one-event body's refusal. */
export function eventRefusal(event: unknown): { status: number; error: string } {
  return refusal(pack([TS, [event], 0]));
}

/** vLLM's last array-form `BlockStored` (12 elements), fields overridable by name. */
export function storedArray(fields: Partial<StoredFields> = {}): unknown[] {
  const f = { ...STORED_DEFAULTS, ...fields };
  return [
    "BlockStored",
    f.block_hashes,
    f.parent_block_hash,
    f.token_ids,
    f.block_size,
    f.lora_id,
    f.medium,
    f.lora_name,
    f.extra_keys,
    f.group_idx,
    f.kv_cache_spec_kind,
    f.kv_cache_spec_sliding_window,
  ];
}

/** vLLM ≥ 0.26's map-form `BlockStored`: fields without a default always, defaulted ones only when not nil. */
export function storedMap(
  fields: Partial<StoredFields> & Record<string, unknown> = {},
): Record<string, unknown> {
  const event: Record<string, unknown> = { type: "BlockStored" };
  for (const key of REQUIRED) event[key] = key in fields ? fields[key] : STORED_DEFAULTS[key];
  for (const [key, value] of Object.entries(fields)) {
    if (!(REQUIRED as readonly string[]).includes(key) && value !== null) event[key] = value;
  }
  return event;
}

const REQUIRED = [
  "block_hashes",
  "parent_block_hash",
  "token_ids",
  "block_size",
  "lora_id",
  "medium",
  "lora_name",
] as const;

export interface StoredFields {
  block_hashes: unknown;
  parent_block_hash: unknown;
  token_ids: unknown;
  block_size: unknown;
  lora_id: unknown;
  medium: unknown;
  lora_name: unknown;
  extra_keys: unknown;
  group_idx: unknown;
  kv_cache_spec_kind: unknown;
  kv_cache_spec_sliding_window: unknown;
}

const STORED_DEFAULTS: StoredFields = {
  block_hashes: [101, 102],
  parent_block_hash: null,
  token_ids: range(1, 32),
  block_size: 16,
  lora_id: null,
  medium: "GPU",
  lora_name: null,
  extra_keys: null,
  group_idx: null,
  kv_cache_spec_kind: null,
  kv_cache_spec_sliding_window: null,
};

export function removedArray(
  hashes: unknown[] = [101],
  medium: unknown = "GPU",
  ...tail: unknown[]
): unknown[] {
  return ["BlockRemoved", hashes, medium, ...tail];
}

export function stored(op: KvOp | null | undefined) {
  expect(op?.kind).toBe("stored");
  return op as Extract<KvOp, { kind: "stored" }>;
}
