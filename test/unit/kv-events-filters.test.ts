import { describe, expect, it } from "vitest";
import {
  decoded,
  onlyOp,
  pack,
  range,
  removedArray,
  stored,
  storedArray,
  storedMap,
  TS,
} from "./kv-events-fixtures";

describe("medium and tier", () => {
  it("maps the media Dynamo knows to its tiers, none, nil and empty being the device", () => {
    const tiers: [unknown, string][] = [
      [undefined, "device"],
      [null, "device"],
      ["", "device"],
      ["GPU", "device"],
      ["DEVICE", "device"],
      ["CPU", "host_pinned"],
      ["CPU_PINNED", "host_pinned"],
      ["CPU_TIER1", "host_pinned"],
      ["CPU_TIER2", "disk"],
      ["DISK", "disk"],
      ["NVME", "disk"],
      ["STORAGE", "disk"],
      ["EXTERNAL", "external"],
      ["NETWORK", "external"],
      ["REMOTE", "external"],
      ["SHARED", "external"],
    ];
    for (const [medium, tier] of tiers) {
      expect(stored(onlyOp(storedMap({ medium }))).tier).toBe(tier);
      expect(onlyOp(removedArray([5], medium))).toMatchObject({ tier });
    }
  });

  it("skips events of a medium Dynamo does not know, matched case-sensitively, rather than file them", () => {
    for (const medium of ["cpu", "FS", "OBJ", "HBM"]) {
      expect(onlyOp(storedArray({ medium }))).toBeNull();
      expect(onlyOp(removedArray([5], medium))).toBeNull();
    }
  });
});

describe("what Dynamo's event path leaves out", () => {
  it("skips events owned by anyone but the framework, and events that are not local", () => {
    expect(onlyOp(storedMap({ ownership: "kvcr" }))).toBeNull();
    expect(onlyOp({ type: "BlockRemoved", block_hashes: [5], ownership: "other" })).toBeNull();
    expect(onlyOp({ type: "AllBlocksCleared", ownership: "kvcr" })).toBeNull();
    expect(onlyOp(["AllBlocksCleared", "kvcr"])).toBeNull();
    expect(onlyOp(storedMap({ locality: "REMOTE" }))).toBeNull();
    expect(onlyOp(storedMap({ locality: "ELSEWHERE" }))).toBeNull();
    expect(onlyOp({ type: "BlockRemoved", block_hashes: [5], locality: "REMOTE" })).toBeNull();
    expect(stored(onlyOp(storedMap({ locality: "LOCAL" }))).tier).toBe("device");
    // Empty is a value Dynamo does not know, not an absent one.
    expect(onlyOp(storedMap({ locality: "" }))).toBeNull();
    expect(onlyOp(storedMap({ ownership: "" }))).toBeNull();
    // The positional tail: group, kind, sliding window, locality, ownership.
    const tail = [...storedArray().slice(0, 9), 0, "full_attention", null, "REMOTE", null];
    expect(onlyOp(tail)).toBeNull();
    expect(onlyOp(removedArray([5], "GPU", 0, null, null, "LOCAL", "kvcr"))).toBeNull();
    expect(onlyOp(removedArray([5], "GPU", 0, null, null, "LOCAL", null))).toMatchObject({ kind: "removed" });
  });

  it("keeps main-attention groups and skips the others, sliding windows, Mamba and unknown kinds", () => {
    for (const kind of ["full_attention", "mla_attention", "sink_full_attention"]) {
      expect(onlyOp(storedMap({ group_idx: 1, kv_cache_spec_kind: kind }))).not.toBeNull();
    }
    for (const kind of [
      "sliding_window",
      "sliding_window_mla",
      "mamba",
      "chunked_local_attention",
      "new_kind",
    ]) {
      expect(onlyOp(storedMap({ group_idx: 0, kv_cache_spec_kind: kind }))).toBeNull();
      expect(onlyOp(storedArray({ group_idx: 0, kv_cache_spec_kind: kind }))).toBeNull();
    }
  });

  it("judges a removal by what the call's stores taught about its group, per rank", () => {
    const learn = [
      storedMap({ block_hashes: [1, 2], group_idx: 0, kv_cache_spec_kind: "sliding_window" }),
      storedMap({ block_hashes: [3, 4], group_idx: 1, kv_cache_spec_kind: "full_attention" }),
    ];
    const removals = [removedArray([1], "GPU", 0), removedArray([3], "GPU", 1), removedArray([5], "GPU", 2)];
    const result = decoded(pack([TS, [...learn, ...removals], 0], [TS, removals, 1]));
    const kept = result.batches.map((b) =>
      b.ops.map((op) => [op.kind, op.kind === "cleared" ? 0 : Number(op.engineHashes[0])]),
    );
    // Rank 0 learned group 0 is a sliding window and group 1 full attention; rank 1 learned nothing,
    // so its group 0 is taken as main and its other groups left out, as Dynamo before it learns them.
    expect(kept).toEqual([
      [
        ["stored", 3],
        ["removed", 3],
      ],
      [["removed", 1]],
    ]);
    expect(result.skipped).toBe(5);
  });

  it("learns groups under the call's rank for batches that name none", () => {
    const learn = storedMap({ block_hashes: [1, 2], group_idx: 3, kv_cache_spec_kind: "full_attention" });
    const body = pack([TS, [learn]], [TS, [removedArray([1], "GPU", 3)], 4]);
    expect(decoded(body, { dpRank: 4 }).batches[1]?.ops).toHaveLength(1);
    expect(decoded(body, { dpRank: 5 }).batches[1]?.ops).toHaveLength(0);
  });

  it("applies no group filter to disk and external tiers, whose events Dynamo takes as they come", () => {
    expect(onlyOp(removedArray([5], "STORAGE", 2))).toMatchObject({ kind: "removed", tier: "disk" });
    expect(
      onlyOp(storedMap({ medium: "EXTERNAL", group_idx: 0, kv_cache_spec_kind: "mamba" })),
    ).not.toBeNull();
  });

  it("skips a store naming its LoRA adapter only by id, which no prompt's hash could match", () => {
    expect(onlyOp(storedArray({ lora_id: 3 }))).toBeNull();
    expect(onlyOp(storedArray({ lora_id: 3, lora_name: "adapter-a" }))).not.toBeNull();
  });

  it("skips stores without tokens: vLLM's offloading placeholders and hash-only stores", () => {
    const placeholder = storedMap({ token_ids: [], block_size: 0, medium: "CPU", group_idx: 0 });
    expect(onlyOp(placeholder)).toBeNull();
    expect(onlyOp(storedMap({ token_ids: null, block_size: null, medium: "CPU" }))).toBeNull();
    expect(onlyOp(storedArray({ block_hashes: [], token_ids: [] }))).toBeNull();
    expect(onlyOp(removedArray([]))).toBeNull();
  });

  it("skips a store that repeats a hash or its parent, as Dynamo drops self-referencing blocks", () => {
    expect(onlyOp(storedArray({ block_hashes: [7, 7] }))).toBeNull();
    expect(onlyOp(storedArray({ block_hashes: [7, 8], parent_block_hash: 8 }))).toBeNull();
    const long = range(1, 40);
    const tokens = range(1, 40 * 4);
    expect(onlyOp(storedArray({ block_hashes: long, token_ids: tokens, block_size: 4 }))).not.toBeNull();
    expect(
      onlyOp(storedArray({ block_hashes: [...long.slice(0, 39), 1], token_ids: tokens, block_size: 4 })),
    ).toBeNull();
    expect(
      onlyOp(storedArray({ block_hashes: long, parent_block_hash: 40, token_ids: tokens, block_size: 4 })),
    ).toBeNull();
  });

  it("does not count skipped events' blocks", () => {
    const result = decoded(pack([TS, [storedArray({ medium: "FS" }), removedArray([1, 2, 3])], 0]));
    expect(result).toMatchObject({ events: 2, skipped: 1, blocks: 3 });
  });
});
