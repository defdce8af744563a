/**
 * 64-bit values in SQLite. SQL bindings reject `bigint` and round numbers above 2^53, so u64 values
 * (worker ids, hashes) are stored as little-endian 8-byte BLOBs, and prompts as one BLOB of 8 bytes
 * per hash.
 */

export function u64ToBlob(value: bigint): ArrayBuffer {
  return new BigUint64Array([value]).buffer;
}

/** Worker ids seen lately, each with its BLOB and decimal form (workers are few, rows many). */
const workerIds = new Map<bigint, ArrayBuffer>();
const decimals = new WeakMap<ArrayBuffer, string>();
const MAX_CACHED_IDS = 4096;

/**
 * A worker id's BLOB, made once per id rather than per row (an ArrayBuffer is an allocation the
 * collector tracks; per row it was ~2% of a busy object's time). Shared: never write to it.
 */
export function workerIdBlob(id: bigint): ArrayBuffer {
  let blob = workerIds.get(id);
  if (!blob) {
    if (workerIds.size >= MAX_CACHED_IDS) workerIds.clear();
    blob = u64ToBlob(id);
    workerIds.set(id, blob);
    decimals.set(blob, id.toString());
  }
  return blob;
}

/** The decimal form of a u64 BLOB (one from {@link workerIdBlob} without converting). */
export function blobDecimal(blob: ArrayBuffer): string {
  return decimals.get(blob) ?? blobToU64(blob).toString();
}

export function blobToU64(blob: ArrayBuffer): bigint {
  return new BigUint64Array(blob, 0, 1)[0]!;
}

export function blobToHashes(blob: ArrayBuffer): BigUint64Array {
  return new BigUint64Array(blob.slice(0));
}
