/**
 * Two's-complement casts between u64 and i64. Dynamo's JSON carries hashes as i64 (hash-only input,
 * `SelectResponse.sequence_hashes`) while the tracker keeps them as u64 (reference §3.5). The array
 * forms are views of the same bytes, not copies.
 */

export function u64ToI64(value: bigint): bigint {
  return BigInt.asIntN(64, value);
}

export function i64ToU64(value: bigint): bigint {
  return BigInt.asUintN(64, value);
}

/** The i64 reading of `hashes`: a view sharing their buffer. */
export function asI64Array(hashes: BigUint64Array): BigInt64Array {
  return new BigInt64Array(hashes.buffer, hashes.byteOffset, hashes.length);
}

/** The u64 reading of `hashes`: a view sharing their buffer. */
export function asU64Array(hashes: BigInt64Array): BigUint64Array {
  return new BigUint64Array(hashes.buffer, hashes.byteOffset, hashes.length);
}
