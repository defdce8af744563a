/**
 * The core benchmark's generated workload, identical for our tracker and the baseline. Request `i`
 * is a pure function of `i` (its own seeded generator), so both trackers see the same requests in the
 * same order without the trace being held in memory, and a request can be rebuilt at will.
 *
 * Shape (issue 5): 8 workers × 8 dp ranks = 64 ranks; every prompt is 64 block hashes, the first 32
 * shared by its family (1,000 families), the last 32 its own; families and ranks are uniform.
 */

export const WORKERS = 8;
export const DP_SIZE = 8;
export const RANKS = WORKERS * DP_SIZE;
export const PROMPT_BLOCKS = 64;
export const SHARED_BLOCKS = 32;
export const FAMILIES = 1_000;
export const QUERY_BLOCKS = 128;

/** mulberry32: small, fast and deterministic; quality is ample for spreading hashes and choices. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  u32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  below(n: number): number {
    return this.u32() % n;
  }

  u64(): bigint {
    return (BigInt(this.u32()) << 32n) | BigInt(this.u32());
  }
}

/** Worker ids: random 64-bit values (real instance ids often exceed 2^53). */
export const WORKER_IDS: readonly bigint[] = Array.from({ length: WORKERS }, (_, w) => {
  const rng = new Rng(0x5eed_0000 + w);
  return rng.u64();
});

/** The 32 shared hashes of every family, as little-endian u32 pairs. */
const FAMILY_WORDS: Uint32Array = (() => {
  const words = new Uint32Array(FAMILIES * SHARED_BLOCKS * 2);
  const rng = new Rng(0xfa417);
  for (let i = 0; i < words.length; i++) words[i] = rng.u32();
  return words;
})();

/** One request of the trace. */
export interface TraceRequest {
  id: string;
  family: number;
  /** Index into `WORKER_IDS`. */
  worker: number;
  dpRank: number;
  newIslTokens: number;
}

/** Request `i`'s identity and placement. */
export function requestOf(i: number): TraceRequest {
  const rng = new Rng(Math.imul(i, 0x9e3779b1) ^ 0x2545f491);
  return {
    id: `req-${i}`,
    family: rng.below(FAMILIES),
    worker: rng.below(WORKERS),
    dpRank: rng.below(DP_SIZE),
    newIslTokens: 256 + rng.below(3840),
  };
}

/** Writes request `i`'s prompt into `out` (64 hashes as u32 pairs, little-endian). */
export function writePrompt(i: number, family: number, out: Uint32Array): void {
  out.set(FAMILY_WORDS.subarray(family * SHARED_BLOCKS * 2, (family + 1) * SHARED_BLOCKS * 2));
  const rng = new Rng(Math.imul(i, 0x85ebca6b) ^ 0x1b873593);
  for (let k = SHARED_BLOCKS * 2; k < PROMPT_BLOCKS * 2; k++) out[k] = rng.u32();
}

/** Request `i`'s prompt as our tracker takes it (a fresh array, as the RPC layer delivers it). */
export function promptArray(i: number, family: number): BigUint64Array {
  const out = new BigUint64Array(PROMPT_BLOCKS);
  writePrompt(i, family, new Uint32Array(out.buffer));
  return out;
}

/** The same prompt as the baseline takes it. */
export function promptBigints(hashes: BigUint64Array): bigint[] {
  return Array.from(hashes);
}

/**
 * A 128-block `potential_loads` query: the prompt of live request `i` followed by 64 fresh blocks (a
 * follow-up turn), so it overlaps 64 blocks on that request's rank and 32 on its family's other ranks.
 */
export function queryArray(i: number, family: number, salt: number): BigUint64Array {
  const out = new BigUint64Array(QUERY_BLOCKS);
  const words = new Uint32Array(out.buffer);
  writePrompt(i, family, words.subarray(0, PROMPT_BLOCKS * 2));
  const rng = new Rng(0x9e37 ^ Math.imul(salt, 0xc2b2ae35));
  for (let k = PROMPT_BLOCKS * 2; k < words.length; k++) words[k] = rng.u32();
  return out;
}
