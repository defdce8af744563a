/**
 * XXH3-64 of inputs over 240 bytes (`XXH3_hashLong_64b`, scalar form): eight u64 accumulators take
 * 64-byte stripes, each stripe against the secret 8 bytes further on; every 16 stripes (a 1,024-byte
 * block) the accumulators are scrambled; the last stripe is the input's final 64 bytes, whole, even if
 * it overlaps the one before; then the accumulators are merged to one u64.
 */
import { HI_WORD, LO_WORD, mul64, mul64By32, mul128Fold, mulHi32, reg } from "./u64-halves";
import {
  MX1_HI,
  MX1_LO,
  PRIME32_1,
  PRIME32_2,
  PRIME32_3,
  PRIME64_1_HI,
  PRIME64_1_LO,
  PRIME64_2_HI,
  PRIME64_2_LO,
  PRIME64_3_HI,
  PRIME64_3_LO,
  PRIME64_4_HI,
  PRIME64_4_LO,
  PRIME64_5_HI,
  PRIME64_5_LO,
  SECRET_SIZE,
  secretForSeed,
} from "./xxh3-secret";

const STRIPE_LEN = 64;
const SECRET_CONSUME_RATE = 8;
const STRIPES_PER_BLOCK = (SECRET_SIZE - STRIPE_LEN) / SECRET_CONSUME_RATE;
const BLOCK_LEN = STRIPE_LEN * STRIPES_PER_BLOCK;
const SCRAMBLE_SECRET = SECRET_SIZE - STRIPE_LEN;
/** `XXH_SECRET_LASTACC_START`: the last stripe reads the secret 7 bytes before the scramble key. */
const LAST_STRIPE_SECRET = SCRAMBLE_SECRET - 7;
/** `XXH_SECRET_MERGEACCS_START`. */
const MERGE_SECRET = 11;

/** `XXH3_INIT_ACC`, as (high, low) halves per lane. */
const INIT_ACC = [
  0,
  PRIME32_3,
  PRIME64_1_HI,
  PRIME64_1_LO,
  PRIME64_2_HI,
  PRIME64_2_LO,
  PRIME64_3_HI,
  PRIME64_3_LO,
  PRIME64_4_HI,
  PRIME64_4_LO,
  0,
  PRIME32_2,
  PRIME64_5_HI,
  PRIME64_5_LO,
  0,
  PRIME32_1,
];

/**
 * The accumulators, lane i's high half at 2i and low half at 2i + 1. One set, reused: hashing is
 * synchronous, so no two hashes interleave. Between scrambles the halves are plain sums, carried
 * and reduced to u32 only by {@link normalize}: a stripe adds under 2^34 to each, so the 17 stripes
 * before a scramble stay far below 2^53, where doubles are exact, and the modular result is the same.
 */
const acc = new Float64Array(16);

const TWO_POW_32 = 4294967296;

/** One stripe: lane i gets the product of its key's halves, and lane i ^ 1 gets its input. */
function accumulate512(input: DataView, at: number, secret: DataView, secretAt: number): void {
  for (let j = 0; j < 4; j++) {
    const o = at + 16 * j;
    const so = secretAt + 16 * j;
    const d0l = input.getUint32(o, true);
    const d0h = input.getUint32(o + 4, true);
    const d1l = input.getUint32(o + 8, true);
    const d1h = input.getUint32(o + 12, true);
    const k0l = (d0l ^ secret.getUint32(so, true)) >>> 0;
    const k0h = (d0h ^ secret.getUint32(so + 4, true)) >>> 0;
    const k1l = (d1l ^ secret.getUint32(so + 8, true)) >>> 0;
    const k1h = (d1h ^ secret.getUint32(so + 12, true)) >>> 0;
    acc[4 * j] = acc[4 * j]! + d1h + mulHi32(k0l, k0h);
    acc[4 * j + 1] = acc[4 * j + 1]! + d1l + (Math.imul(k0l, k0h) >>> 0);
    acc[4 * j + 2] = acc[4 * j + 2]! + d0h + mulHi32(k1l, k1h);
    acc[4 * j + 3] = acc[4 * j + 3]! + d0l + (Math.imul(k1l, k1h) >>> 0);
  }
}

/** Carries each lane's low sum into its high one and reduces both to u32s. */
function normalize(): void {
  for (let i = 0; i < 16; i += 2) {
    const l = acc[i + 1]!;
    const low = l >>> 0;
    acc[i] = (acc[i]! + (l - low) / TWO_POW_32) >>> 0;
    acc[i + 1] = low;
  }
}

/** `XXH3_scrambleAcc`: acc ^= acc >> 47; acc ^= key; acc *= PRIME32_1. Takes normalized lanes. */
function scramble(secret: DataView): void {
  for (let i = 0; i < 8; i++) {
    const h = acc[2 * i]!;
    const l = acc[2 * i + 1]! ^ (h >>> 15);
    mul64By32(
      (h ^ secret.getUint32(SCRAMBLE_SECRET + 8 * i + 4, true)) >>> 0,
      (l ^ secret.getUint32(SCRAMBLE_SECRET + 8 * i, true)) >>> 0,
      PRIME32_1,
    );
    acc[2 * i] = reg[0]!;
    acc[2 * i + 1] = reg[1]!;
  }
}

/** Writes the XXH3-64 of `input[at ..< at + length]` (length > 240) at `out[2k ..]`, halves as in `u64-halves`. */
export function hashLongInto(
  input: DataView,
  at: number,
  length: number,
  seedHi: number,
  seedLo: number,
  out: Uint32Array,
  outAt: number,
): void {
  const secret = secretForSeed(seedHi, seedLo);
  acc.set(INIT_ACC);
  const blocks = Math.floor((length - 1) / BLOCK_LEN);
  for (let n = 0; n < blocks; n++) {
    for (let s = 0; s < STRIPES_PER_BLOCK; s++) {
      accumulate512(input, at + n * BLOCK_LEN + s * STRIPE_LEN, secret, s * SECRET_CONSUME_RATE);
    }
    normalize();
    scramble(secret);
  }
  const stripes = Math.floor((length - 1 - blocks * BLOCK_LEN) / STRIPE_LEN);
  for (let s = 0; s < stripes; s++) {
    accumulate512(input, at + blocks * BLOCK_LEN + s * STRIPE_LEN, secret, s * SECRET_CONSUME_RATE);
  }
  accumulate512(input, at + length - STRIPE_LEN, secret, LAST_STRIPE_SECRET);
  normalize();

  // `XXH3_mergeAccs`: start from length × PRIME64_1, add each lane pair folded against the secret.
  mul64(0, length, PRIME64_1_HI, PRIME64_1_LO);
  let sumHi = reg[0]!;
  let sumLo = reg[1]!;
  for (let i = 0; i < 4; i++) {
    const s = MERGE_SECRET + 16 * i;
    mul128Fold(
      (acc[4 * i]! ^ secret.getUint32(s + 4, true)) >>> 0,
      (acc[4 * i + 1]! ^ secret.getUint32(s, true)) >>> 0,
      (acc[4 * i + 2]! ^ secret.getUint32(s + 12, true)) >>> 0,
      (acc[4 * i + 3]! ^ secret.getUint32(s + 8, true)) >>> 0,
    );
    const l = sumLo + reg[1]!;
    sumHi = (sumHi + reg[0]! + (l > 0xffffffff ? 1 : 0)) >>> 0;
    sumLo = l >>> 0;
  }
  // `XXH3_avalanche`: h ^= h >> 37; h *= PRIME_MX1; h ^= h >> 32.
  mul64(sumHi, (sumLo ^ (sumHi >>> 5)) >>> 0, MX1_HI, MX1_LO);
  out[outAt + HI_WORD] = reg[0]!;
  out[outAt + LO_WORD] = reg[1]! ^ reg[0]!;
}
