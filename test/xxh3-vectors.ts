/**
 * XXH3-64's official vectors: xxHash's sanity check (`cli/xsum_sanity_check.c`, `XSUM_XXH3_testdata`)
 * over its generated buffer, shared by the Node and the workerd tests.
 */

/** xxHash's sanity-check primes (`PRIME64` is also the seed of the seeded vectors: above 2^63). */
const PRIME32 = 2654435761n;
export const PRIME64 = 11400714785074694797n;

/** xxHash's sanity buffer (`XSUM_fillTestBuffer`): byte i is the top byte of PRIME32 × PRIME64^i. */
export function sanityBuffer(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let gen = PRIME32;
  for (let i = 0; i < length; i++) {
    bytes[i] = Number(gen >> 56n);
    gen = BigInt.asUintN(64, gen * PRIME64);
  }
  return bytes;
}

export const SANITY_BUFFER = sanityBuffer(2400);

/** `XSUM_XXH3_testdata` (xxHash's `cli/xsum_sanity_check.c`): length, seed, XXH3-64. */
export const XSUM_XXH3: [number, bigint, bigint][] = [
  [0, 0n, 0x2d06800538d394c2n],
  [0, PRIME64, 0xa8a6b918b2f0364an],
  [1, 0n, 0xc44bdff4074eecdbn],
  [1, PRIME64, 0x032be332dd766ef8n],
  [6, 0n, 0x27b56a84cd2d7325n],
  [6, PRIME64, 0x84589c116ab59ab9n],
  [12, 0n, 0xa713daf0dfbb77e7n],
  [12, PRIME64, 0xe7303e1b2336de0en],
  [24, 0n, 0xa3fe70bf9d3510ebn],
  [24, PRIME64, 0x850e80fc35bdd690n],
  [48, 0n, 0x397da259ecba1f11n],
  [48, PRIME64, 0xadc2cbaa44acc616n],
  [80, 0n, 0xbcdefbbb2c47c90an],
  [80, PRIME64, 0xc6dd0cb699532e73n],
  [195, 0n, 0xcd94217ee362ec3an],
  [195, PRIME64, 0xba68003d370cb3d9n],
  [403, 0n, 0xcdeb804d65c6dea4n],
  [403, PRIME64, 0x6259f6ecfd6443fdn],
  [512, 0n, 0x617e49599013cb6bn],
  [512, PRIME64, 0x3ce457de14c27708n],
  [2048, 0n, 0xdd59e2c3a5f038e0n],
  [2048, PRIME64, 0x66f81670669ababcn],
  [2099, 0n, 0xc6b9d9b3fc9ac765n],
  [2099, PRIME64, 0x184f316843663974n],
  [2240, 0n, 0x6e73a90539cf2948n],
  [2240, PRIME64, 0x757ba8487d1b5247n],
  [2367, 0n, 0xcb37aeb9e5d361edn],
  [2367, PRIME64, 0xd2db3415b942b42an],
];
