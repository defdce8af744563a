/**
 * The hashing module inside workerd, where WebAssembly compiled at run time is refused: Dynamo's
 * vectors (reference §3.6) and xxHash's own must come out the same as in Node.
 */
import { describe, expect, it } from "vitest";
import { blockHashSeed, XXH3_SEED } from "../../durable-objects/core/hashing/block-seed";
import { asI64Array, u64ToI64 } from "../../durable-objects/core/hashing/i64";
import { hashPrompt } from "../../durable-objects/core/hashing/prompt-hashes";
import { PUBLIC_TRACKING, trackingHashOf } from "../../durable-objects/core/hashing/tracking-config";
import { xxh3Hash, xxh3String } from "../../durable-objects/core/hashing/xxh3";
import { seededRng } from "../../durable-objects/core/routing/rng";
import {
  EAGLE_BLOCK_COUNTS,
  I64_VECTORS,
  KEYED_VECTORS,
  PUBLIC_VECTORS,
  range,
  TEST_DATA_HASH,
} from "../dynamo-hash-vectors";
import { SANITY_BUFFER, XSUM_XXH3 } from "../xxh3-vectors";

function partition(blockSize: number, modelName = "model", routingGroup = "default") {
  return { modelName, routingGroup, blockSize, isEagle: false };
}

const PUBLIC = { tracking: PUBLIC_TRACKING, assumeKvReuse: true, rng: seededRng(1) };

describe("hashing in workerd", () => {
  it.each(XSUM_XXH3)(
    "matches xxHash's sanity vector for %i bytes under seed %s",
    (length, seed, expected) => {
      expect(xxh3Hash(SANITY_BUFFER.subarray(0, length), seed)).toBe(expected);
    },
  );

  it("hashes Dynamo's test string as protocols.rs asserts", () => {
    expect(xxh3String("test data", XXH3_SEED)).toBe(TEST_DATA_HASH);
  });

  it.each(PUBLIC_VECTORS)("gives $name the reference's public hashes", (v) => {
    const prompt = {
      tokenIds: v.tokens,
      loraName: v.loraName,
      cacheSalt: v.cacheSalt,
      isEagle: v.isEagle,
      blockMmInfos: v.blockMmInfos,
    };
    const hashes = hashPrompt(prompt, partition(v.blockSize), PUBLIC);
    expect([...hashes.blockHashes]).toEqual(v.blockHashes);
    expect([...hashes.sequenceHashes]).toEqual(v.sequenceHashes);
    expect([...hashes.trackingHashes]).toEqual(v.sequenceHashes);
    if (v.seed !== undefined) expect(blockHashSeed(v.loraName, v.cacheSalt)).toBe(v.seed);
  });

  it("gives the i64 forms /select_and_reserve returns", () => {
    const hashes = hashPrompt({ tokenIds: Uint32Array.from(range(1, 12)) }, partition(4), PUBLIC);
    expect(u64ToI64(hashes.blockHashes[0]!)).toBe(I64_VECTORS.block_1_4);
    expect([...asI64Array(hashes.sequenceHashes)]).toEqual(I64_VECTORS.sequence_1_12);
  });

  it.each(KEYED_VECTORS)("gives Dynamo's keyed tracking hashes for $name, from a base64 key", (v) => {
    const config = trackingHashOf({
      ROUTER_TRACKING_KEY: btoa(String.fromCharCode(...v.key)),
      ROUTER_TRACKING_KEY_ID: v.keyId,
    });
    if (!config.ok) throw new Error(config.problem);
    const prompt = {
      tokenIds: v.tokens,
      cacheSalt: v.cacheSalt,
      loraName: v.loraName,
      isEagle: v.isEagle,
      blockMmInfos: v.blockMmInfos,
    };
    const hashes = hashPrompt(prompt, partition(v.blockSize, v.modelName, v.routingGroup), {
      tracking: config.tracking,
      assumeKvReuse: true,
      rng: seededRng(1),
    });
    expect([...hashes.trackingHashes]).toEqual(v.sequenceHashes);
  });

  it.each(EAGLE_BLOCK_COUNTS)("counts %i eagle tokens as %i blocks", (tokens, blocks) => {
    const hashes = hashPrompt({ tokenIds: range(1, tokens), isEagle: true }, partition(4), PUBLIC);
    expect(hashes.blockCount).toBe(blocks);
  });
});
