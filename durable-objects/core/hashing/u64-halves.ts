/**
 * 64-bit arithmetic on pairs of u32 halves, for XXH3's 16-byte path in JavaScript (`xxh3-short.ts`).
 * `bigint` arithmetic allocates a heap number per operation (a 64×64 multiply and its masking are
 * several), which makes a hash some tens of times slower; a pair of u32s lives in registers.
 * Functions return their 64-bit result in `reg` instead of an object, so a call allocates nothing.
 * `reg` is a typed array, not two `let`s: V8 boxes a module variable's non-small number in a fresh
 * heap number on every store, and those allocations were most of the hash's time.
 *
 * Every `(xh, xl)` argument is a u32 pair (xh the high half); results are u32s.
 */

const TWO_POW_32 = 4294967296;
const INV_TWO_POW_32 = 1 / TWO_POW_32;

/** The last result: its high half at `reg[0]`, its low half at `reg[1]`. */
export const reg = new Uint32Array(2);

/**
 * The high 32 bits of `a × b` for u32s. `Math.imul` gives the low 32 bits exactly; the double product
 * is within 2^10 of the truth (its half-ulp below 2^64), and so is the subtraction, so the quotient
 * is the high half ± 2^-21, and adding ½ then truncating rounds it exactly (faster than `Math.round`).
 */
export function mulHi32(a: number, b: number): number {
  return ((a * b - (Math.imul(a, b) >>> 0)) * INV_TWO_POW_32 + 0.5) >>> 0;
}

/** The low 64 bits of `a × b` (wrapping u64 multiplication). */
export function mul64(ah: number, al: number, bh: number, bl: number): void {
  reg[0] = mulHi32(al, bl) + Math.imul(al, bh) + Math.imul(ah, bl);
  reg[1] = Math.imul(al, bl);
}

/**
 * XXH3's `mul128_fold64`: the full 128-bit product of two u64s, its high 64 bits XOR its low 64 bits.
 * Column sums stay below 2^35, exact in a double, so carries are a division by 2^32.
 */
export function mul128Fold(ah: number, al: number, bh: number, bl: number): void {
  const llLo = Math.imul(al, bl) >>> 0;
  const llHi = mulHi32(al, bl);
  const lhLo = Math.imul(al, bh) >>> 0;
  const hlLo = Math.imul(ah, bl) >>> 0;
  const hhLo = Math.imul(ah, bh) >>> 0;
  const cross = llHi + lhLo + hlLo;
  const upper = hhLo + mulHi32(al, bh) + mulHi32(ah, bl) + Math.floor(cross / TWO_POW_32);
  reg[0] = (mulHi32(ah, bh) + Math.floor(upper / TWO_POW_32)) ^ cross;
  reg[1] = upper ^ llLo;
}

/** The bytes of a u32 reversed. */
export function swap32(x: number): number {
  return ((x << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
}

/** Whether this platform stores typed-array elements little-endian (every Workers host does). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Where a u64's halves sit among the u32 words of a `BigUint64Array`'s buffer: element k's low half
 * is word `2k + LO_WORD`. Writing halves there fills the array without making a `bigint` per hash.
 */
export const LO_WORD = LITTLE_ENDIAN ? 0 : 1;
export const HI_WORD = 1 - LO_WORD;
