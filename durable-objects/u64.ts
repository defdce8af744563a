/**
 * 64-bit values in SQLite. SQL bindings reject `bigint` and round numbers above 2^53, so u64 values
 * (worker ids, hashes) are stored as little-endian 8-byte BLOBs, and prompts as one BLOB of 8 bytes
 * per hash.
 */

export function u64ToBlob(value: bigint): ArrayBuffer {
  return new BigUint64Array([value]).buffer;
}

export function blobToU64(blob: ArrayBuffer): bigint {
  return new BigUint64Array(blob, 0, 1)[0]!;
}

/** The hashes' bytes as an ArrayBuffer of exactly their length (a view may sit inside a larger one). */
export function hashesToBlob(hashes: BigUint64Array): ArrayBuffer {
  const { buffer, byteOffset, byteLength } = hashes;
  if (byteOffset === 0 && byteLength === buffer.byteLength && buffer instanceof ArrayBuffer) return buffer;
  return hashes.slice().buffer as ArrayBuffer;
}

export function blobToHashes(blob: ArrayBuffer): BigUint64Array {
  return new BigUint64Array(blob.slice(0));
}
