/**
 * Tracking hashes under `assume_kv_reuse = false` (reference §3.4): a random u64 per complete block
 * (Dynamo: `fastrand::u64`), so no two bookings share blocks in the active-load state, while the
 * indexer keeps the public block hashes. The randomness is injected, so tests can seed it.
 */
import type { Rng } from "../routing/rng";
import { HI_WORD, LO_WORD } from "./u64-halves";

const TWO_POW_32 = 4294967296;

/** `count` random u64s, each from two 32-bit draws of `rng`. */
export function randomSequenceHashes(count: number, rng: Rng): BigUint64Array {
  const hashes = new BigUint64Array(count);
  const words = new Uint32Array(hashes.buffer);
  for (let i = 0; i < count; i++) {
    words[2 * i + HI_WORD] = Math.floor(rng() * TWO_POW_32);
    words[2 * i + LO_WORD] = Math.floor(rng() * TWO_POW_32);
  }
  return hashes;
}
