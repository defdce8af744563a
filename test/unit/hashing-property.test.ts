import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { BlockMmInfos } from "../../durable-objects/core/hashing/block-hashes";
import { blockHashSeed, XXH3_SEED } from "../../durable-objects/core/hashing/block-seed";
import { keyedSeeds } from "../../durable-objects/core/hashing/keyed-seeds";
import { hashPrompt } from "../../durable-objects/core/hashing/prompt-hashes";
import { PUBLIC_TRACKING } from "../../durable-objects/core/hashing/tracking-config";
import { xxh3Hash } from "../../durable-objects/core/hashing/xxh3";
import { seededRng } from "../../durable-objects/core/routing/rng";

/**
 * Reference §3.1–3.3 written out plainly: each block's bytes built in a fresh buffer and hashed whole
 * (XXH3 itself is checked against xxHash's vectors and hash-wasm in `xxh3.test.ts`), each chain link
 * hashed from its 16 bytes.
 */
function plainBlockHashes(
  tokens: number[],
  bs: number,
  eagle: boolean,
  mm: BlockMmInfos,
  seed: bigint,
): bigint[] {
  const window = bs + (eagle ? 1 : 0);
  const hashes: bigint[] = [];
  for (let i = 0; i * bs + window <= tokens.length; i++) {
    const mmHashes = (mm[i]?.mmObjects ?? [])
      .map((o) => o.mmHash)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const view = new DataView(new ArrayBuffer(4 * window + 8 * mmHashes.length));
    for (let j = 0; j < window; j++) view.setUint32(4 * j, tokens[i * bs + j]!, true);
    for (const [k, h] of mmHashes.entries()) view.setBigUint64(4 * window + 8 * k, h, true);
    hashes.push(xxh3Hash(new Uint8Array(view.buffer), seed));
  }
  return hashes;
}

function plainChain(blocks: bigint[], seed: bigint): bigint[] {
  const chain: bigint[] = [];
  for (const [i, block] of blocks.entries()) {
    if (i === 0) {
      chain.push(block);
      continue;
    }
    const view = new DataView(new ArrayBuffer(16));
    view.setBigUint64(0, chain[i - 1]!, true);
    view.setBigUint64(8, block, true);
    chain.push(xxh3Hash(new Uint8Array(view.buffer), seed));
  }
  return chain;
}

const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const name = fc.option(fc.constantFrom("", "adapter-a", "tenant-a", "ünïcode"), { nil: undefined });

/** Block sizes 1..70 put blocks on every XXH3 path: 4–8, 9–16, 17–128, 129–240 bytes and the long one. */
const prompts = fc.record({
  tokens: fc.array(fc.nat({ max: 2 ** 32 - 1 }), { maxLength: 400 }),
  blockSize: fc.integer({ min: 1, max: 70 }),
  isEagle: fc.boolean(),
  blockMmInfos: fc.array(
    fc.option(fc.record({ mmObjects: fc.array(fc.record({ mmHash: u64 }), { maxLength: 3 }) })),
    {
      maxLength: 8,
    },
  ),
  loraName: name,
  cacheSalt: name,
});

describe("hashing a prompt, against the reference written out plainly", () => {
  it("gives the public block and sequence hashes for any tokens, block size, eagle flag, mm infos, lora and salt", () => {
    fc.assert(
      fc.property(prompts, (p) => {
        const hashes = hashPrompt(
          { tokenIds: p.tokens, blockMmInfos: p.blockMmInfos, loraName: p.loraName, cacheSalt: p.cacheSalt },
          { modelName: "model", routingGroup: "default", blockSize: p.blockSize, isEagle: p.isEagle },
          { tracking: PUBLIC_TRACKING, assumeKvReuse: true, rng: seededRng(1) },
        );
        const blocks = plainBlockHashes(
          p.tokens,
          p.blockSize,
          p.isEagle,
          p.blockMmInfos,
          blockHashSeed(p.loraName, p.cacheSalt),
        );
        expect([...hashes.blockHashes]).toEqual(blocks);
        expect([...hashes.sequenceHashes]).toEqual(plainChain(blocks, XXH3_SEED));
        expect(hashes.blockCount).toBe(blocks.length);
      }),
      { numRuns: 150 },
    );
  });

  it("gives the keyed tracking hashes from the derived block and chain seeds", () => {
    const key = new Uint8Array(32).fill(0x5a);
    fc.assert(
      fc.property(prompts, (p) => {
        const partition = {
          modelName: "model-a",
          routingGroup: "tenant-a",
          blockSize: p.blockSize,
          isEagle: p.isEagle,
        };
        const hashes = hashPrompt(
          { tokenIds: p.tokens, blockMmInfos: p.blockMmInfos, loraName: p.loraName, cacheSalt: p.cacheSalt },
          partition,
          {
            tracking: { algorithm: "keyed-xxh3-v1", keyId: "2026-01", key },
            assumeKvReuse: true,
            rng: seededRng(1),
          },
        );
        const seeds = keyedSeeds(key, {
          keyId: "2026-01",
          ...partition,
          loraName: p.loraName,
          cacheSalt: p.cacheSalt,
        });
        const blocks = plainBlockHashes(p.tokens, p.blockSize, p.isEagle, p.blockMmInfos, seeds.blockSeed);
        expect([...hashes.trackingHashes]).toEqual(plainChain(blocks, seeds.chainSeed));
      }),
      { numRuns: 100 },
    );
  });
});
