/**
 * UTF-8 strings of the replication codec: short ASCII decoded by hand, the rest by a fatal
 * `TextDecoder`, and recurring short strings (map keys, replica names, variants) from a cache.
 */
import { CodecError } from "./codec-error";

// `ignoreBOM`: a string may start with U+FEFF, and it must come back.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/**
 * Recurring strings up to `MAX_CACHED_KEY` bytes are cached in a hash table of 2^KEY_SLOT_BITS
 * chained buckets, emptied once it holds `MAX_CACHED_KEYS` (keys of unknown fields must not grow it
 * without bound).
 */
const MAX_CACHED_KEY = 32;
const KEY_SLOT_BITS = 10;
const MAX_CACHED_KEYS = 4096;
const keyTable: ({ bytes: Uint8Array; value: string }[] | undefined)[] = new Array(1 << KEY_SLOT_BITS);
let keyCount = 0;

/**
 * The string of `n` bytes at `start`, from the cache when it was seen before, so decoding an event
 * does not build its two dozen key strings again each time.
 */
export function cachedString(b: Uint8Array, start: number, n: number, what: string): string {
  if (n === 0 || n > MAX_CACHED_KEY) return decodeUtf8(b, start, n, what);
  // Length and four sampled bytes: enough to spread this codec's keys; the bytes are compared anyway.
  let h = Math.imul(
    n ^ (b[start]! << 8) ^ (b[start + n - 1]! << 16) ^ (b[start + (n >> 1)]! << 24),
    0x9e37_79b1,
  );
  h = Math.imul(h ^ (b[start + (n >> 2)]! * 31), 0x85eb_ca6b);
  const slot = h >>> (32 - KEY_SLOT_BITS);
  const bucket = keyTable[slot];
  if (bucket !== undefined) {
    for (const entry of bucket) {
      const cached = entry.bytes;
      if (cached.length !== n) continue;
      let i = 0;
      while (i < n && cached[i] === b[start + i]) i++;
      if (i === n) return entry.value;
    }
  }
  const value = decodeUtf8(b, start, n, what);
  if (++keyCount > MAX_CACHED_KEYS) {
    keyTable.fill(undefined);
    keyCount = 1;
  }
  const entry = { bytes: b.slice(start, start + n), value };
  if (bucket === undefined || keyCount === 1) keyTable[slot] = [entry];
  else bucket.push(entry);
  return value;
}

/** ASCII by hand (short strings are the common case, and `TextDecoder` has a fixed cost per call). */
export function decodeUtf8(b: Uint8Array, start: number, n: number, what: string): string {
  if (n <= 32) {
    let s = "";
    let i = start;
    while (i < start + n && b[i]! < 0x80) s += String.fromCharCode(b[i++]!);
    if (i === start + n) return s;
  }
  try {
    return utf8.decode(b.subarray(start, start + n));
  } catch {
    throw new CodecError(`event-codec: ${what}: invalid UTF-8 at byte ${start}`);
  }
}
