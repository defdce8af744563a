import { describe, expect, it } from "vitest";
import { blockHashesWithSeed, completeBlockCount } from "../../durable-objects/core/hashing/block-hashes";
import { blockHashSeed, XXH3_SEED } from "../../durable-objects/core/hashing/block-seed";
import { asI64Array, asU64Array, i64ToU64, u64ToI64 } from "../../durable-objects/core/hashing/i64";
import { keyedSeeds } from "../../durable-objects/core/hashing/keyed-seeds";
import { hashPrompt, type PromptInput } from "../../durable-objects/core/hashing/prompt-hashes";
import { nextSequenceHash, sequenceHashes } from "../../durable-objects/core/hashing/sequence-hashes";
import { tokenBytes } from "../../durable-objects/core/hashing/token-bytes";
import { PUBLIC_TRACKING, type TrackingHash } from "../../durable-objects/core/hashing/tracking-config";
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

function publicPrompt(v: (typeof PUBLIC_VECTORS)[number]): PromptInput {
  return {
    tokenIds: v.tokens,
    loraName: v.loraName,
    cacheSalt: v.cacheSalt,
    isEagle: v.isEagle,
    blockMmInfos: v.blockMmInfos,
  };
}

function partition(blockSize: number, modelName = "model", routingGroup = "default") {
  return { modelName, routingGroup, blockSize, isEagle: false };
}

const PUBLIC = { tracking: PUBLIC_TRACKING, assumeKvReuse: true, rng: seededRng(1) };

describe("Dynamo's public hashes (reference §3.6)", () => {
  it("hashes Dynamo's test string as protocols.rs asserts", () => {
    expect(xxh3String("test data", XXH3_SEED)).toBe(TEST_DATA_HASH);
  });

  it.each(PUBLIC_VECTORS)("gives $name the reference's block and sequence hashes", (v) => {
    const hashes = hashPrompt(publicPrompt(v), partition(v.blockSize), PUBLIC);
    expect([...hashes.blockHashes]).toEqual(v.blockHashes);
    expect([...hashes.sequenceHashes]).toEqual(v.sequenceHashes);
    expect([...hashes.trackingHashes]).toEqual(v.sequenceHashes);
    expect(hashes.blockCount).toBe(v.blockHashes.length);
    expect(hashes.tokenCount).toBe(v.tokens.length);
    if (v.seed !== undefined) expect(blockHashSeed(v.loraName, v.cacheSalt)).toBe(v.seed);
  });

  it("chains one step at a time as it chains a whole prompt", () => {
    const [first, second, third] = PUBLIC_VECTORS[2]!.blockHashes as [bigint, bigint, bigint];
    const seq1 = nextSequenceHash(first, second);
    expect(seq1).toBe(4945711292740353085n);
    expect(nextSequenceHash(seq1, third)).toBe(12583592247330656132n);
    expect([...sequenceHashes(new BigUint64Array([first, second, third]))]).toEqual(
      PUBLIC_VECTORS[2]!.sequenceHashes,
    );
  });

  it("casts to the i64 values /select_and_reserve returns, and back", () => {
    const hashes = hashPrompt({ tokenIds: range(1, 12) }, partition(4), PUBLIC);
    expect(u64ToI64(hashes.blockHashes[0]!)).toBe(I64_VECTORS.block_1_4);
    expect([...asI64Array(hashes.sequenceHashes)]).toEqual(I64_VECTORS.sequence_1_12);
    expect(i64ToU64(I64_VECTORS.block_1_4)).toBe(14643705804678351452n);
    expect([...asU64Array(BigInt64Array.from(I64_VECTORS.sequence_1_12))]).toEqual(
      PUBLIC_VECTORS[2]!.sequenceHashes,
    );
  });

  it("drops the partial trailing block, and with it its sequence hash", () => {
    const hashes = hashPrompt({ tokenIds: range(1, 11) }, partition(4), PUBLIC);
    expect([...hashes.blockHashes]).toEqual(PUBLIC_VECTORS[1]!.blockHashes);
    expect([...hashes.sequenceHashes]).toEqual(PUBLIC_VECTORS[1]!.sequenceHashes);
    expect(hashes.tokenCount).toBe(11);
  });

  it("gives no blocks for block size 0", () => {
    expect(hashPrompt({ tokenIds: range(1, 8) }, partition(0), PUBLIC).blockCount).toBe(0);
  });

  it.each(EAGLE_BLOCK_COUNTS)("counts %i eagle tokens as %i blocks", (tokens, blocks) => {
    expect(completeBlockCount(tokens, 4, true)).toBe(blocks);
    const hashes = hashPrompt({ tokenIds: range(1, tokens), isEagle: true }, partition(4), PUBLIC);
    expect([hashes.blockHashes.length, hashes.sequenceHashes.length]).toEqual([blocks, blocks]);
  });

  it("counts [1..4] without eagle as one block", () => {
    expect(completeBlockCount(4, 4, false)).toBe(1);
  });

  it("takes the partition's eagle flag unless the request gives one", () => {
    const eagleVector = PUBLIC_VECTORS.find((v) => v.isEagle)!;
    const eaglePartition = { ...partition(4), isEagle: true };
    expect([...hashPrompt({ tokenIds: range(1, 9) }, eaglePartition, PUBLIC).blockHashes]).toEqual(
      eagleVector.blockHashes,
    );
    const overridden = hashPrompt({ tokenIds: range(1, 8), isEagle: false }, eaglePartition, PUBLIC);
    expect([...overridden.blockHashes]).toEqual(PUBLIC_VECTORS[1]!.blockHashes);
  });

  it("treats empty lora and salt names as absent", () => {
    expect(blockHashSeed("", "")).toBe(XXH3_SEED);
    const hashes = hashPrompt({ tokenIds: range(1, 8), loraName: "", cacheSalt: "" }, partition(4), PUBLIC);
    expect([...hashes.blockHashes]).toEqual(PUBLIC_VECTORS[1]!.blockHashes);
  });
});

describe("multimodal blocks", () => {
  const mm = PUBLIC_VECTORS.find((v) => v.blockMmInfos)!;
  const hashOf = (blockMmInfos: PromptInput["blockMmInfos"]) => [
    ...hashPrompt({ tokenIds: range(1, 8), blockMmInfos }, partition(4), PUBLIC).blockHashes,
  ];

  it("sorts a block's mm hashes, so their order in the request does not matter", () => {
    expect(hashOf([{ mmObjects: [{ mmHash: 7n }, { mmHash: 42n }] }])).toEqual(mm.blockHashes);
  });

  it("sorts mm hashes as unsigned 64-bit values", () => {
    const high = 2n ** 63n + 1n;
    expect(hashOf([{ mmObjects: [{ mmHash: high }, { mmHash: 1n }] }])).toEqual(
      hashOf([{ mmObjects: [{ mmHash: 1n }, { mmHash: high }] }]),
    );
  });

  it("hashes a null entry, a missing index or an object-less entry as a plain block", () => {
    const plain = PUBLIC_VECTORS[1]!.blockHashes;
    expect(hashOf([null, null])).toEqual(plain);
    expect(hashOf([])).toEqual(plain);
    expect(hashOf([{ mmObjects: [] }])).toEqual(plain);
    expect(hashOf([null, { mmObjects: [{ mmHash: 7n }] }])[0]).toBe(plain[0]);
  });

  it("hashes mm_routing_info's tokens and mm infos instead when it has tokens", () => {
    const routed = hashPrompt(
      {
        tokenIds: [9, 9, 9, 9],
        mmRoutingInfo: { routingTokenIds: mm.tokens, blockMmInfos: mm.blockMmInfos },
      },
      partition(4),
      PUBLIC,
    );
    expect([...routed.blockHashes]).toEqual(mm.blockHashes);
    expect(routed.tokenCount).toBe(8);
    const empty = hashPrompt(
      { tokenIds: range(1, 4), mmRoutingInfo: { routingTokenIds: [] } },
      partition(4),
      PUBLIC,
    );
    expect([...empty.blockHashes]).toEqual(PUBLIC_VECTORS[0]!.blockHashes);
  });
});

function keyedTracking(v: (typeof KEYED_VECTORS)[number]): TrackingHash {
  return { algorithm: "keyed-xxh3-v1", keyId: v.keyId, key: v.key };
}

describe("keyed-xxh3-v1 (reference §3.3)", () => {
  it.each(KEYED_VECTORS)("gives Dynamo's tracking hashes for $name", (v) => {
    const hashes = hashPrompt(
      {
        tokenIds: v.tokens,
        cacheSalt: v.cacheSalt,
        loraName: v.loraName,
        isEagle: v.isEagle,
        blockMmInfos: v.blockMmInfos,
      },
      partition(v.blockSize, v.modelName, v.routingGroup),
      { tracking: keyedTracking(v), assumeKvReuse: true, rng: seededRng(1) },
    );
    expect([...hashes.trackingHashes]).toEqual(v.sequenceHashes);
    const publicHashes = hashPrompt(
      {
        tokenIds: v.tokens,
        cacheSalt: v.cacheSalt,
        loraName: v.loraName,
        isEagle: v.isEagle,
        blockMmInfos: v.blockMmInfos,
      },
      partition(v.blockSize),
      PUBLIC,
    );
    expect(hashes.blockHashes).toEqual(publicHashes.blockHashes);
    expect(hashes.sequenceHashes).toEqual(publicHashes.sequenceHashes);
  });

  it("seeds differently for each part of the scope", () => {
    const base = {
      keyId: "2026-01",
      modelName: "model-a",
      routingGroup: "group-a",
      blockSize: 4,
      isEagle: false,
    };
    const key = new Uint8Array(32).fill(0x23);
    const seeds = (scope: typeof base & { cacheSalt?: string; loraName?: string }, k = key) =>
      keyedSeeds(k, scope);
    const all = [
      seeds(base),
      seeds({ ...base, keyId: "2026-02" }),
      seeds({ ...base, modelName: "model-b" }),
      seeds({ ...base, routingGroup: "group-b" }),
      seeds({ ...base, blockSize: 3 }),
      seeds({ ...base, cacheSalt: "cache-a" }),
      seeds({ ...base, loraName: "adapter-a" }),
      seeds({ ...base, isEagle: true }),
      seeds(base, new Uint8Array(32).fill(0x24)),
    ];
    expect(new Set(all.map((s) => s.blockSeed)).size).toBe(all.length);
    expect(new Set(all.map((s) => s.chainSeed)).size).toBe(all.length);
    expect(seeds({ ...base, cacheSalt: "", loraName: "" })).toEqual(seeds(base));
  });
});

describe("assume_kv_reuse = false", () => {
  it("tracks one random u64 per complete block, drawn from the injected rng, and keeps the public hashes", () => {
    const options = { tracking: PUBLIC_TRACKING, assumeKvReuse: false };
    const first = hashPrompt({ tokenIds: range(1, 9), isEagle: true }, partition(4), {
      ...options,
      rng: seededRng(7),
    });
    const again = hashPrompt({ tokenIds: range(1, 9), isEagle: true }, partition(4), {
      ...options,
      rng: seededRng(7),
    });
    const other = hashPrompt({ tokenIds: range(1, 9), isEagle: true }, partition(4), {
      ...options,
      rng: seededRng(8),
    });
    expect(first.trackingHashes.length).toBe(2);
    expect(first.trackingHashes).toEqual(again.trackingHashes);
    expect(first.trackingHashes).not.toEqual(other.trackingHashes);
    expect(first.trackingHashes).not.toEqual(first.sequenceHashes);
    expect([...first.blockHashes]).toEqual(PUBLIC_VECTORS.find((v) => v.isEagle)!.blockHashes);
    expect(new Set(first.trackingHashes).size).toBe(2);
  });

  it("fills all 64 bits", () => {
    const { trackingHashes } = hashPrompt({ tokenIds: range(1, 4096) }, partition(4), {
      tracking: PUBLIC_TRACKING,
      assumeKvReuse: false,
      rng: seededRng(3),
    });
    expect(trackingHashes.some((h) => h >= 2n ** 63n)).toBe(true);
    expect(trackingHashes.some((h) => h < 2n ** 32n)).toBe(false);
  });
});

describe("token input", () => {
  it("hashes a Uint32Array, a subarray of one and a number array alike", () => {
    const words = Uint32Array.from([0, ...range(1, 12)]);
    const expected = PUBLIC_VECTORS[2]!.blockHashes;
    for (const tokenIds of [words.subarray(1), range(1, 12)]) {
      expect([...hashPrompt({ tokenIds }, partition(4), PUBLIC).blockHashes]).toEqual(expected);
    }
  });

  it("hashes tokens of 2^31 and above as u32s", () => {
    const tokens = [0xffffffff, 0x80000000, 1, 2];
    const bytes = new Uint8Array(16);
    const view = new DataView(bytes.buffer);
    for (const [i, t] of tokens.entries()) view.setUint32(4 * i, t, true);
    const [block] = blockHashesWithSeed(tokenBytes(tokens), { blockSize: 4, isEagle: false }, XXH3_SEED);
    expect(block).toBe(xxh3Hash(bytes, XXH3_SEED));
  });

  it("refuses a number that is not a u32 instead of wrapping it", () => {
    for (const bad of [-1, 2 ** 32, 1.5, Number.NaN]) {
      expect(() => tokenBytes([1, bad])).toThrow(RangeError);
    }
  });
});
