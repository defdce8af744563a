/**
 * XXH3-64's 9–16 byte path in JavaScript, on u32 halves: the event index's path hashes
 * (`cache-index/path-hash.ts`) chain two u64s at every block of every KV event, and this takes them
 * and gives the result as halves, with no `bigint` and no copy into the WebAssembly module that
 * hashes everything else (`xxh3.ts`). The tests hold it to that module at every seed they try.
 */
import { HI_WORD, LO_WORD, mul64, mul128Fold, reg, swap32 } from "./u64-halves";
import { MX1_HI, MX1_LO, DEFAULT_SECRET as S } from "./xxh3-secret";

const TWO_POW_32 = 4294967296;

/** `XXH3_avalanche`: h ^= h >> 37; h *= PRIME_MX1; h ^= h >> 32. */
export function avalancheInto(h: number, l: number, out: Uint32Array, at: number): void {
  mul64(h, (l ^ (h >>> 5)) >>> 0, MX1_HI, MX1_LO);
  out[at + HI_WORD] = reg[0]!;
  out[at + LO_WORD] = reg[1]! ^ reg[0]!;
}

/**
 * The 9–16 byte path on its two (overlapping) u64 reads: the first 8 bytes `(ah, al)` and the last 8
 * `(bh, bl)`. The path hashes' 16-byte inputs call it directly with the two hashes' halves.
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
