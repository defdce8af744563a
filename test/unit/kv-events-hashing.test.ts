import { describe, expect, it } from "vitest";
import { blockHashesWithSeed } from "../../durable-objects/core/hashing/block-hashes";
import { blockHashSeed } from "../../durable-objects/core/hashing/block-seed";
import { hashPrompt, type PromptInput } from "../../durable-objects/core/hashing/prompt-hashes";
import { tokenBytes } from "../../durable-objects/core/hashing/token-bytes";
import { PUBLIC_TRACKING } from "../../durable-objects/core/hashing/tracking-config";
import { seededRng } from "../../durable-objects/core/routing/rng";
import { PUBLIC_VECTORS } from "../dynamo-hash-vectors";
import { decoded, onlyOp, pack, range, stored, storedArray, storedMap, TS } from "./kv-events-fixtures";

/** The query side: a prompt's public block hashes, as `/selection/*` and `/route` compute them. */
function promptHashes(prompt: PromptInput, blockSize: number, isEagle = false): bigint[] {
  const partition = { modelName: "m", routingGroup: "default", blockSize, isEagle };
  const options = { tracking: PUBLIC_TRACKING, assumeKvReuse: true, rng: seededRng(1) };
  return [...hashPrompt(prompt, partition, options).blockHashes];
}

function localHashes(event: unknown): bigint[] {
  return [...stored(onlyOp(event)).localHashes];
}

const vector = (name: string) => PUBLIC_VECTORS.find((v) => v.name.startsWith(name))!;

/** Dynamo's marked form of an mm_hash in vLLM's extra_keys: 16 hex digits, 48 zeros. */
const marked = (mmHash: bigint) => mmHash.toString(16).padStart(16, "0") + "0".repeat(48);

describe("stored blocks hash as prompts do", () => {
  it("gives each stored block the query side's block hash of the same tokens", () => {
    const tokens = range(1000, 1063);
    const whole = promptHashes({ tokenIds: tokens }, 16);
    expect(localHashes(storedArray({ block_hashes: [1, 2, 3, 4], token_ids: tokens }))).toEqual(whole);
    const seed = blockHashSeed();
    expect(whole).toEqual([
      ...blockHashesWithSeed(tokenBytes(tokens), { blockSize: 16, isEagle: false }, seed),
    ]);
  });

  it("hashes a run that continues a prefix as that prefix's later blocks, not from its start", () => {
    const tokens = range(1, 64);
    const first = storedArray({ block_hashes: [11, 12], token_ids: tokens.slice(0, 32) });
    const next = storedMap({ block_hashes: [13, 14], parent_block_hash: 12, token_ids: tokens.slice(32) });
    const ops = decoded(pack([TS, [first], 0], [TS, [next], 0])).batches.flatMap((b) => b.ops);
    expect(ops.flatMap((op) => [...stored(op).localHashes])).toEqual(promptHashes({ tokenIds: tokens }, 16));
  });

  it("matches Dynamo's vectors: plain, under a LoRA name, and under a cache salt", () => {
    expect(
      localHashes(storedArray({ block_hashes: [1, 2, 3], token_ids: range(1, 12), block_size: 4 })),
    ).toEqual(vector("[1..12]").blockHashes);
    const lora = storedArray({ token_ids: range(1, 8), block_size: 4, lora_id: 1, lora_name: "adapter-a" });
    expect(localHashes(lora)).toEqual(vector("lora adapter-a").blockHashes);
    const salted = storedMap({ token_ids: range(1, 8), block_size: 4, cache_salt: "tenant-a" });
    expect(localHashes(salted)).toEqual(vector("cache_salt tenant-a").blockHashes);
    const both = storedMap({
      token_ids: range(1, 8),
      block_size: 4,
      lora_name: "adapter-a",
      cache_salt: "tenant-a",
    });
    expect(localHashes(both)).toEqual(vector("lora and salt").blockHashes);
    expect(localHashes(both)).toEqual(
      promptHashes({ tokenIds: range(1, 8), loraName: "adapter-a", cacheSalt: "tenant-a" }, 4),
    );
  });

  it("reads an empty LoRA name or salt as none, as prompts do", () => {
    const plain = localHashes(storedMap({ token_ids: range(1, 8), block_size: 4 }));
    expect(
      localHashes(storedMap({ token_ids: range(1, 8), block_size: 4, lora_name: "", cache_salt: "" })),
    ).toEqual(plain);
  });

  it("takes SGLang's salt from its position-7 metadata map and vLLM's from Dynamo's tag in extra_keys", () => {
    const want = vector("cache_salt tenant-a").blockHashes;
    const sglang = ["BlockStored", [1, 2], null, range(1, 8), 4, null, "GPU", { cache_salt: "tenant-a" }];
    expect(localHashes(sglang)).toEqual(want);
    const tagged = [["adapter-a", "dynamo-cache-salt:tenant-a"], ["adapter-a"]];
    const vllm = storedArray({
      token_ids: range(1, 8),
      block_size: 4,
      lora_name: "adapter-a",
      extra_keys: tagged,
    });
    expect(localHashes(vllm)).toEqual(vector("lora and salt").blockHashes);
    // A salt equal to the LoRA name: the first key equal to the name is the adapter's.
    const same = [["adapter-a", "dynamo-cache-salt:adapter-a"]];
    const sameEvent = storedMap({
      token_ids: range(1, 8),
      block_size: 4,
      lora_name: "adapter-a",
      extra_keys: [same[0], null],
    });
    expect(localHashes(sameEvent)).toEqual(
      promptHashes({ tokenIds: range(1, 8), loraName: "adapter-a", cacheSalt: "adapter-a" }, 4),
    );
    // An event's own cache_salt wins over the tag; untagged strings are not salts.
    const own = storedMap({
      token_ids: range(1, 8),
      block_size: 4,
      cache_salt: "tenant-a",
      extra_keys: [["dynamo-cache-salt:b"], null],
    });
    expect(localHashes(own)).toEqual(want);
    const untagged = storedMap({ token_ids: range(1, 8), block_size: 4, extra_keys: [["tenant-a"], null] });
    expect(localHashes(untagged)).toEqual(vector("[1..8]").blockHashes);
  });

  it("hashes Dynamo-marked multimodal hashes in extra_keys into their blocks, as block_mm_infos", () => {
    const want = vector("mm: block 0").blockHashes;
    const keys = [[marked(42n), [marked(7n), 0]], null];
    expect(localHashes(storedArray({ token_ids: range(1, 8), block_size: 4, extra_keys: keys }))).toEqual(
      want,
    );
    const infos = [
      {
        mm_objects: [
          { mm_hash: 42, offsets: [[0, 2]] },
          { mm_hash: 7n, offsets: [] },
        ],
      },
      null,
    ];
    expect(localHashes(storedMap({ token_ids: range(1, 8), block_size: 4, block_mm_infos: infos }))).toEqual(
      want,
    );
    const prompt = {
      tokenIds: range(1, 8),
      blockMmInfos: [{ mmObjects: [{ mmHash: 42n }, { mmHash: 7n }] }, null],
    };
    expect(want).toEqual(promptHashes(prompt, 4));
  });

  it("leaves a block plain for extra keys that are not marked hashes: vLLM digests, LoRA names, typed maps", () => {
    const plain = vector("[1..8]").blockHashes;
    const digest = "ab".repeat(32);
    const keys = [
      [digest, [digest, 3], "adapter", 5, Uint8Array.of(1), { type: "mm", hash: marked(42n) }],
      null,
    ];
    expect(localHashes(storedMap({ token_ids: range(1, 8), block_size: 4, extra_keys: keys }))).toEqual(
      plain,
    );
    expect(localHashes(storedMap({ token_ids: range(1, 8), block_size: 4, extra_keys: "opaque" }))).toEqual(
      plain,
    );
  });

  it("hashes EAGLE token pairs over block_size + 1 tokens, as an EAGLE prompt", () => {
    const tokens = range(1, 9);
    const pairs = tokens.slice(0, -1).map((t, i) => [t, tokens[i + 1]]);
    const want = vector("eagle").blockHashes;
    expect(localHashes(storedArray({ token_ids: pairs, block_size: 4 }))).toEqual(want);
    expect(want).toEqual(promptHashes({ tokenIds: tokens }, 4, true));
  });
});
