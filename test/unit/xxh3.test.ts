import fc from "fast-check";
import { xxhash3 } from "hash-wasm";
import { describe, expect, it } from "vitest";
import { PathHasher } from "../../durable-objects/core/cache-index/path-hash";
import { blockHashesWithSeed } from "../../durable-objects/core/hashing/block-hashes";
import { XXH3_SEED } from "../../durable-objects/core/hashing/block-seed";
import { chainInPlace } from "../../durable-objects/core/hashing/sequence-hashes";
import { tokenBytes } from "../../durable-objects/core/hashing/token-bytes";
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

/** Token words of a xorshift stream: a prompt of `count` tokens, the same on every run. */
function tokensOf(count: number, fill: number): Uint32Array {
  const words = new Uint32Array(count);
  let x = fill | 1;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  return words;
}

/** LE64(a) ‖ LE64(b), the 16 bytes of one step of the sequence chain. */
function pairBytes(a: bigint, b: bigint): Uint8Array {
  return new Uint8Array(new BigUint64Array([a, b]).buffer);
}

describe("the module's calls over long inputs, which go through its memory a chunk at a time", () => {
  // A call takes 48 KiB of token bytes: 768 blocks of 16 tokens, 192 of 64, none of 13,000.
  it.each([
    { tokens: 40_000, blockSize: 16, isEagle: false },
    { tokens: 40_001, blockSize: 64, isEagle: true },
    { tokens: 40_000, blockSize: 13_000, isEagle: false },
    { tokens: 39_001, blockSize: 13_000, isEagle: true },
  ])(
    "hashes every block of $tokens tokens, block size $blockSize, eagle $isEagle, as hash-wasm does",
    async (shape) => {
      const words = tokensOf(shape.tokens, shape.blockSize);
      const bytes = new Uint8Array(words.buffer);
      const hashes = blockHashesWithSeed(tokenBytes(words), shape, XXH3_SEED);
      const stride = 4 * shape.blockSize;
      const window = stride + (shape.isEagle ? 4 : 0);
      expect(hashes.length).toBe(Math.floor((shape.tokens - (shape.isEagle ? 1 : 0)) / shape.blockSize));
      for (let i = 0; i < hashes.length; i++) {
        const block = bytes.slice(i * stride, i * stride + window);
        expect({ i, hash: hashes[i] }).toEqual({ i, hash: await oracle(block, XXH3_SEED) });
      }
    },
  );

  it("chains 20,000 hashes, across its calls' edges, as step-by-step XXH3 of each pair does", async () => {
    const blocks = new BigUint64Array(tokensOf(40_000, 7).buffer);
    const chained = chainInPlace(blocks.slice(), PRIME64);
    let parent = blocks[0]!;
    expect(chained[0]).toBe(parent);
    for (let i = 1; i < blocks.length; i++) {
      parent = await oracle(pairBytes(parent, blocks[i]!), PRIME64);
      if (chained[i] !== parent) expect({ i, hash: chained[i] }).toEqual({ i, hash: parent });
    }
    expect(chained.at(-1)).toBe(parent);
  });

  it("grows its memory for one input longer than a chunk, and hashes it whole", async () => {
    const bytes = new Uint8Array(tokensOf(100_000, 3).buffer);
    expect(xxh3Hash(bytes, XXH3_SEED)).toBe(await oracle(bytes, XXH3_SEED));
    // Afterwards short inputs still hash where they did.
    expect(xxh3Hash(bytes.subarray(0, 64), XXH3_SEED)).toBe(await oracle(bytes.slice(0, 64), XXH3_SEED));
  });
});

describe("the 16-byte path in JavaScript (the event index's path hashes)", () => {
  it("gives what the module gives for the same pair under seed 1337", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        (parent, local) => {
          const hasher = new PathHasher();
          const lo = (x: bigint) => Number(BigInt.asIntN(32, x));
          const hi = (x: bigint) => Number(BigInt.asIntN(32, x >> 32n));
          hasher.child(lo(parent), hi(parent), lo(local), hi(local));
          const path = BigInt.asUintN(32, BigInt(hasher.lo)) | (BigInt.asUintN(32, BigInt(hasher.hi)) << 32n);
          expect(path).toBe(xxh3Hash(pairBytes(parent, local), XXH3_SEED));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
