/**
 * XXH3-64 of inputs of at most 16 bytes, and the finishers (avalanches) that every length shares.
 * Each writes its result as u32 halves into `out` (see `xxh3Into`).
 */
import { HI_WORD, LO_WORD, mul64, mul128Fold, reg, swap32 } from "./u64-halves";
import {
  MX1_HI,
  MX1_LO,
  MX2_HI,
  MX2_LO,
  PRIME64_2_HI,
  PRIME64_2_LO,
  PRIME64_3_HI,
  PRIME64_3_LO,
  DEFAULT_SECRET as S,
} from "./xxh3-secret";

const TWO_POW_32 = 4294967296;

/** `XXH3_avalanche`: h ^= h >> 37; h *= PRIME_MX1; h ^= h >> 32. */
export function avalancheInto(h: number, l: number, out: Uint32Array, at: number): void {
  mul64(h, (l ^ (h >>> 5)) >>> 0, MX1_HI, MX1_LO);
  out[at + HI_WORD] = reg[0]!;
  out[at + LO_WORD] = reg[1]! ^ reg[0]!;
}

/** `XXH64_avalanche`: h ^= h >> 33; h *= PRIME64_2; h ^= h >> 29; h *= PRIME64_3; h ^= h >> 32. */
function avalanche64Into(h: number, l: number, out: Uint32Array, at: number): void {
  mul64(h, (l ^ (h >>> 1)) >>> 0, PRIME64_2_HI, PRIME64_2_LO);
  const h2 = reg[0]!;
  const l2 = (reg[1]! ^ ((reg[1]! >>> 29) | (reg[0]! << 3))) >>> 0;
  mul64((h2 ^ (h2 >>> 29)) >>> 0, l2, PRIME64_3_HI, PRIME64_3_LO);
  out[at + HI_WORD] = reg[0]!;
  out[at + LO_WORD] = reg[1]! ^ reg[0]!;
}

/** `XXH3_rrmxmx`, the 4–8 byte finisher: rotations, two multiplies by PRIME_MX2, shifts. */
function rrmxmxInto(h: number, l: number, length: number, out: Uint32Array, at: number): void {
  const rh = ((l << 17) | (h >>> 15)) ^ ((h << 24) | (l >>> 8));
  const rl = ((h << 17) | (l >>> 15)) ^ ((l << 24) | (h >>> 8));
  mul64((h ^ rh) >>> 0, (l ^ rl) >>> 0, MX2_HI, MX2_LO);
  mul64(reg[0]!, (reg[1]! ^ ((reg[0]! >>> 3) + length)) >>> 0, MX2_HI, MX2_LO);
  out[at + HI_WORD] = reg[0]! ^ (reg[0]! >>> 28);
  out[at + LO_WORD] = reg[1]! ^ ((reg[1]! >>> 28) | (reg[0]! << 4));
}

/**
 * The 9–16 byte path on its two (overlapping) u64 reads: the first 8 bytes `(ah, al)` and the last 8
 * `(bh, bl)`. The sequence chain's 16-byte inputs call it directly with the two hashes' halves.
 */
export function hash9to16Into(
  ah: number,
  al: number,
  bh: number,
  bl: number,
  length: number,
  seedHi: number,
  seedLo: number,
  out: Uint32Array,
  at: number,
): void {
  // bitflip1 = (secret[24..] ^ secret[32..]) + seed; bitflip2 = (secret[40..] ^ secret[48..]) - seed.
  const f1l = ((S.getUint32(24, true) ^ S.getUint32(32, true)) >>> 0) + seedLo;
  const f1h = (S.getUint32(28, true) ^ S.getUint32(36, true)) + seedHi + (f1l > 0xffffffff ? 1 : 0);
  const f2l = ((S.getUint32(40, true) ^ S.getUint32(48, true)) >>> 0) - seedLo;
  const f2h = (S.getUint32(44, true) ^ S.getUint32(52, true)) - seedHi - (f2l < 0 ? 1 : 0);
  const xh = (ah ^ f1h) >>> 0;
  const xl = (al ^ f1l) >>> 0;
  const yh = (bh ^ f2h) >>> 0;
  const yl = (bl ^ f2l) >>> 0;
  mul128Fold(xh, xl, yh, yl);
  // length + swap64(x) + y + fold, the low column's carries taken by division.
  const sumLo = length + swap32(xh) + yl + reg[1]!;
  const sumHi = swap32(xl) + yh + reg[0]! + Math.floor(sumLo / TWO_POW_32);
  avalancheInto(sumHi >>> 0, sumLo >>> 0, out, at);
}
/** 4–8 bytes: the seed's low half, byte-swapped, XORed into its high half; then input1 ‖ input2. */
export function hash4to8Into(
  input: DataView,
  at: number,
  length: number,
  seedHi: number,
  seedLo: number,
  out: Uint32Array,
  outAt: number,
): void {
  const sh = (seedHi ^ swap32(seedLo)) >>> 0;
  const fl = ((S.getUint32(8, true) ^ S.getUint32(16, true)) >>> 0) - seedLo;
  const fh = (S.getUint32(12, true) ^ S.getUint32(20, true)) - sh - (fl < 0 ? 1 : 0);
  const h = (input.getUint32(at, true) ^ fh) >>> 0;
  const l = (input.getUint32(at + length - 4, true) ^ fl) >>> 0;
  rrmxmxInto(h, l, length, out, outAt);
}

/** 1–3 bytes: first, middle and last byte and the length in one u32, against the seeded secret. */
export function hash1to3Into(
  input: DataView,
  at: number,
  length: number,
  seedHi: number,
  seedLo: number,
  out: Uint32Array,
  outAt: number,
): void {
  const c1 = input.getUint8(at);
  const c2 = input.getUint8(at + (length >>> 1));
  const c3 = input.getUint8(at + length - 1);
  const combined = ((c1 << 16) | (c2 << 24) | c3 | (length << 8)) >>> 0;
  const fl = ((S.getUint32(0, true) ^ S.getUint32(4, true)) >>> 0) + seedLo;
  const fh = (seedHi + (fl > 0xffffffff ? 1 : 0)) >>> 0;
  avalanche64Into(fh, ((fl >>> 0) ^ combined) >>> 0, out, outAt);
}

/** The empty input: the seed against two secret words, through XXH64's avalanche. */
export function hash0Into(seedHi: number, seedLo: number, out: Uint32Array, outAt: number): void {
  const h = S.getUint32(60, true) ^ S.getUint32(68, true) ^ seedHi;
  const l = S.getUint32(56, true) ^ S.getUint32(64, true) ^ seedLo;
  avalanche64Into(h >>> 0, l >>> 0, out, outAt);
}
