import fc from "fast-check";
import { xxhash3 } from "hash-wasm";
import { describe, expect, it } from "vitest";
import { XXH3_SEED } from "../../durable-objects/core/hashing/block-seed";
import { xxh3Hash } from "../../durable-objects/core/hashing/xxh3";
import { PRIME64, SANITY_BUFFER, XSUM_XXH3 } from "../xxh3-vectors";

/** hash-wasm's XXH3-64 (WASM, fine in Node): the oracle. */
async function oracle(bytes: Uint8Array, seed: bigint): Promise<bigint> {
  const hex = await xxhash3(bytes, Number(seed & 0xffffffffn), Number(seed >> 32n));
  return BigInt(`0x${hex}`);
}

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
