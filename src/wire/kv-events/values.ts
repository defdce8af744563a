/**
 * Readers of the decoded MessagePack values that events carry. `@msgpack/msgpack` gives integers of
 * up to 32 bits as numbers and 64-bit ones as `bigint` (`useBigInt64`), `bin` as `Uint8Array`, maps as
 * plain objects; each reader takes what an engine may send and says `undefined` for anything else.
 */

/** A decoded map: an object that is neither an array nor bytes. */
export function isMap(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

/** nil and a missing key or position read the same. */
export function isNil(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

const U64_BYTES = 8;

/**
 * A block hash as a u64. Integers: signed ones (builtin-`hash` vLLM, SGLang's int64) are read as their
 * two's complement, as Dynamo's `BlockHashValue::into_u64` does. Bytes (vLLM with
 * `VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=0`): the digest read big-endian modulo 2^64, i.e. its last 8
 * bytes, which is both llm-d's fold and vLLM's own `maybe_convert_block_hash`, so an engine gives the
 * same hash whichever way it is configured.
 */
export function hash64(value: unknown): bigint | undefined {
  if (typeof value === "bigint") return BigInt.asUintN(64, value);
  if (typeof value === "number")
    return Number.isSafeInteger(value) ? BigInt.asUintN(64, BigInt(value)) : undefined;
  if (value instanceof Uint8Array) {
    if (value.length >= U64_BYTES) {
      return new DataView(value.buffer, value.byteOffset + value.length - U64_BYTES, U64_BYTES).getBigUint64(
        0,
      );
    }
    let folded = 0n;
    for (const byte of value) folded = (folded << 8n) | BigInt(byte);
    return folded;
  }
  return undefined;
}

/** A u32 (token id, block size, group index), from a number or an exact `bigint`. */
export function u32(value: unknown): number | undefined {
  if (typeof value === "number") return value >>> 0 === value ? value : undefined;
  if (typeof value === "bigint") return value >= 0n && value <= 0xffffffffn ? Number(value) : undefined;
  return undefined;
}

/** Dynamo's `Option<String>` fields, where vLLM and SGLang send "" for none: "" is absent. */
export function text(value: unknown): string | null | undefined {
  if (isNil(value)) return null;
  if (typeof value !== "string") return undefined;
  return value === "" ? null : value;
}
