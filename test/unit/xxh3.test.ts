import fc from "fast-check";
import { xxhash3 } from "hash-wasm";
import { describe, expect, it } from "vitest";
import { XXH3_SEED } from "../../durable-objects/core/hashing/block-seed";
import { xxh3Hash } from "../../durable-objects/core/hashing/xxh3";

const PRIME32 = 2654435761n;
const PRIME64 = 11400714785074694797n;

/** xxHash's sanity buffer (`XSUM_fillTestBuffer`): byte i is the top byte of PRIME32 × PRIME64^i. */
function sanityBuffer(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let gen = PRIME32;
  for (let i = 0; i < length; i++) {
    bytes[i] = Number(gen >> 56n);
    gen = BigInt.asUintN(64, gen * PRIME64);
  }
  return bytes;
}

/** hash-wasm's XXH3-64 (WASM, fine in Node): the oracle. */
async function oracle(bytes: Uint8Array, seed: bigint): Promise<bigint> {
  const hex = await xxhash3(bytes, Number(seed & 0xffffffffn), Number(seed >> 32n));
  return BigInt(`0x${hex}`);
}

const SANITY_BUFFER = sanityBuffer(2400);

/** `XSUM_XXH3_testdata` (xxHash's `cli/xsum_sanity_check.c`): length, seed, XXH3-64. */
const XSUM_XXH3: [number, bigint, bigint][] = [
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

/** Every path's edges: 0, 1–3, 4–8, 9–16, 17–128, 129–240, and the long path's blocks and stripes. */
const EDGE_LENGTHS = [
  0, 1, 3, 4, 8, 9, 16, 17, 32, 33, 64, 65, 96, 97, 128, 129, 240, 241, 256, 1024, 1025, 2048,
];
const EDGE_SEEDS = [0n, 1n, XXH3_SEED, 2n ** 32n, 2n ** 63n, 2n ** 63n + 1337n, 2n ** 64n - 1n];

describe("XXH3-64", () => {
  it.each(XSUM_XXH3)(
    "matches xxHash's sanity vector for %i bytes under seed %s",
    (length, seed, expected) => {
      expect(xxh3Hash(SANITY_BUFFER.subarray(0, length), seed)).toBe(expected);
    },
  );

  it("matches hash-wasm at each path's edge lengths, for small seeds, 1337 and seeds of 2^63 and above", async () => {
    for (const length of EDGE_LENGTHS) {
      for (const seed of EDGE_SEEDS) {
        const bytes = SANITY_BUFFER.subarray(0, length);
        expect({ length, seed, hash: xxh3Hash(bytes, seed) }).toEqual({
          length,
          seed,
          hash: await oracle(bytes, seed),
        });
      }
    }
  });

  it("matches hash-wasm at every length from 0 to 2,048", async () => {
    for (let length = 0; length <= 2048; length++) {
      const bytes = SANITY_BUFFER.subarray(0, length);
      const seed = length % 2 === 0 ? XXH3_SEED : PRIME64;
      expect({ length, hash: xxh3Hash(bytes, seed) }).toEqual({ length, hash: await oracle(bytes, seed) });
    }
  });

  it("matches hash-wasm for random bytes at random offsets, lengths 0..2048 and u64 seeds", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2048 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer(),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        async (length, offset, fill, seed) => {
          const buffer = new Uint8Array(offset + length);
          let x = fill | 1;
          for (let i = 0; i < buffer.length; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            buffer[i] = x;
          }
          const bytes = buffer.subarray(offset);
          expect(xxh3Hash(bytes, seed)).toBe(await oracle(bytes.slice(), seed));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("reduces a seed modulo 2^64", () => {
    const bytes = SANITY_BUFFER.subarray(0, 300);
    expect(xxh3Hash(bytes, 2n ** 64n + 5n)).toBe(xxh3Hash(bytes, 5n));
    expect(xxh3Hash(bytes, -1n)).toBe(xxh3Hash(bytes, 2n ** 64n - 1n));
  });
});
