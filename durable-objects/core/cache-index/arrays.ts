/**
 * Typed-array helpers of the cache index's stores, which keep every record as a run of int32 words
 * (no object per block or entry) and recycle ids through free lists.
 */

/** "No id": an empty list, a missing block or entry. */
export const NONE = -1;

/** `old`'s values in a longer array of the same type; the new tail is 0. */
export function grown<T extends Int32Array | Uint8Array | Float64Array>(old: T, length: number): T {
  const next = new (old.constructor as new (n: number) => T)(length);
  next.set(old);
  return next;
}

/** Capacity growth by half, not double: these arrays are most of the index's memory. */
export function nextCapacity(capacity: number): number {
  return capacity + Math.max(16, capacity >> 1);
}
