import { describe, expect, it } from "vitest";
import type { KvEventBatch } from "../../durable-objects/kv-event-types";
import {
  decoded,
  hex,
  onlyOp,
  opsOf,
  pack,
  range,
  removedArray,
  stored,
  storedArray,
  storedMap,
  TS,
} from "./kv-events-fixtures";

/** engine-kv-events §4: BlockStored(101, 102; tokens 1..32; bs 16) + BlockRemoved(101), rank 0. */
const WORKED = {
  arrays: hex(
    "93cb41da3054981000009298ab426c6f636b53746f726564926566c0dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a3475055c093ac426c6f636b52656d6f7665649165a347505500",
  ),
  lastArrays: hex(
    "93cb41da305498100000929cab426c6f636b53746f726564926566c0dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a3475055c0c0c0c0c094ac426c6f636b52656d6f7665649165a3475055c000",
  ),
  maps: hex(
    "93cb41da3054981000009288a474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573926566b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20aa626c6f636b5f73697a6510a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c083a474797065ac426c6f636b52656d6f766564ac626c6f636b5f6861736865739165a66d656469756da347505500",
  ),
  realMaps: hex(
    "93cb41da305498100000928ba474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573926566b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20aa626c6f636b5f73697a6510a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c0aa65787472615f6b65797392c0c0a967726f75705f69647800b26b765f63616368655f737065635f6b696e64ae66756c6c5f617474656e74696f6e84a474797065ac426c6f636b52656d6f766564ac626c6f636b5f6861736865739165a66d656469756da3475055a967726f75705f6964780000",
  ),
};

/** What every form of the worked example decodes to, local hashes aside. */
function expectWorked(batch: KvEventBatch | undefined): void {
  expect(batch?.at).toBe(1757500000250);
  expect(batch?.dpRank).toBe(0);
  const [store, remove] = batch?.ops ?? [];
  const s = stored(store);
  expect(s.tier).toBe("device");
  expect(s.blockSize).toBe(16);
  expect([...s.engineHashes]).toEqual([101n, 102n]);
  expect(s.parent).toBeNull();
  expect(s.localHashes).toHaveLength(2);
  expect(remove).toEqual({ kind: "removed", tier: "device", engineHashes: BigUint64Array.of(101n) });
}

describe("the worked example of engine-kv-events §4, byte for byte", () => {
  it("builds each form's bytes from the reference's structures exactly as its hex", () => {
    const v11 = [1757500000.25, [storedArray().slice(0, 8), removedArray()], 0];
    expect(pack(v11)).toEqual(WORKED.arrays);
    expect(WORKED.arrays).toHaveLength(91);
    const last = [TS, [storedArray(), removedArray([101], "GPU", null)], 0];
    expect(pack(last)).toEqual(WORKED.lastArrays);
    expect(WORKED.lastArrays).toHaveLength(96);
    const maps = [TS, [storedMap(), { type: "BlockRemoved", block_hashes: [101], medium: "GPU" }], 0];
    expect(pack(maps)).toEqual(WORKED.maps);
    expect(WORKED.maps).toHaveLength(198);
    const real = storedMap({ extra_keys: [null, null], group_idx: 0, kv_cache_spec_kind: "full_attention" });
    const realRemove = { type: "BlockRemoved", block_hashes: [101], medium: "GPU", group_idx: 0 };
    expect(pack([TS, [real, realRemove], 0])).toEqual(WORKED.realMaps);
    expect(WORKED.realMaps).toHaveLength(268);
  });

  it("decodes all four forms to the same batch, local hashes included", () => {
    const results = Object.values(WORKED).map((body) => decoded(body));
    for (const result of results) {
      expect(result).toMatchObject({ events: 2, blocks: 3, skipped: 0 });
      expectWorked(result.batches[0]);
    }
    const hashes = results.map((r) => [...stored(r.batches[0]?.ops[0]).localHashes]);
    for (const h of hashes) expect(h).toEqual(hashes[0]);
  });
});

describe("batch forms", () => {
  const store = storedArray();

  it("takes [ts, events] of vLLM before data_parallel_rank, and a nil rank, as no rank", () => {
    const [two] = decoded(pack([TS, [store]])).batches;
    const [nil] = decoded(pack([TS, [store], null])).batches;
    expect(two?.dpRank).toBeNull();
    expect(nil?.dpRank).toBeNull();
    expect(two).toEqual(nil);
    expect(decoded(pack([TS, [store], 3])).batches[0]?.dpRank).toBe(3);
  });

  it("takes a map batch, with data_parallel_rank or Dynamo's alias dp_rank, ignoring other keys", () => {
    const array = decoded(pack([TS, [store], 2])).batches[0];
    const map = decoded(pack({ ts: TS, events: [store], data_parallel_rank: 2, note: "x" })).batches[0];
    const alias = decoded(pack({ events: [store], ts: TS, dp_rank: 2 })).batches[0];
    expect(map).toEqual(array);
    expect(alias).toEqual(array);
  });

  it("rounds ts to epoch ms, takes an integer ts, and gives 0 for a batch without one", () => {
    expect(decoded(pack([1757500000.0006, []])).batches[0]?.at).toBe(1757500000001);
    expect(decoded(pack([1757500000, []])).batches[0]?.at).toBe(1757500000000);
    expect(decoded(pack([null, []])).batches[0]?.at).toBe(0);
    expect(decoded(pack({ events: [] })).batches[0]?.at).toBe(0);
  });

  it("accepts empty batches, TRT-LLM's heartbeats, as batches without ops", () => {
    const result = decoded(pack([TS, [], 0]));
    expect(result).toEqual({
      ok: true,
      batches: [{ at: 1757500000250, dpRank: 0, ops: [] }],
      events: 0,
      blocks: 0,
      skipped: 0,
    });
  });

  it("reads concatenated MessagePack values as consecutive batches, counting over all of them", () => {
    const body = pack([TS, [store], 0], [TS + 1, [], 1], { ts: TS + 2, events: [removedArray([7])] });
    const result = decoded(body);
    expect(result.batches.map((b) => [b.at, b.dpRank, b.ops.map((op) => op.kind)])).toEqual([
      [1757500000250, 0, ["stored"]],
      [1757500001250, 1, []],
      [1757500002250, null, ["removed"]],
    ]);
    expect(result).toMatchObject({ events: 2, blocks: 3, skipped: 0 });
  });

  it("ignores a batch array's elements past the rank", () => {
    expect(decoded(pack([TS, [store], 0, "future"])).batches).toEqual(
      decoded(pack([TS, [store], 0])).batches,
    );
  });
});

describe("event forms across versions", () => {
  it("reads every array length vLLM has sent, trailing fields nil or missing, the same", () => {
    const full = onlyOp(storedArray());
    for (const length of [6, 7, 8, 9, 10, 12]) expect(onlyOp(storedArray().slice(0, length))).toEqual(full);
    expect(onlyOp(storedArray({ group_idx: 0, kv_cache_spec_kind: "full_attention" }))).toEqual(full);
    expect(onlyOp(storedMap())).toEqual(full);
    expect(onlyOp(storedMap({ extra_keys: [null, null], group_idx: 0 }))).toEqual(full);
  });

  it("reads BlockRemoved with and without medium and group_idx, and AllBlocksCleared", () => {
    const expected = { kind: "removed", tier: "device", engineHashes: BigUint64Array.of(5n, 6n) };
    expect(onlyOp(["BlockRemoved", [5, 6]])).toEqual(expected);
    expect(onlyOp(["BlockRemoved", [5, 6], null])).toEqual(expected);
    expect(onlyOp(["BlockRemoved", [5, 6], "GPU", 0])).toEqual(expected);
    expect(onlyOp({ type: "BlockRemoved", block_hashes: [5, 6], medium: null, group_idx: 0 })).toEqual(
      expected,
    );
    expect(onlyOp(["AllBlocksCleared"])).toEqual({ kind: "cleared" });
    expect(onlyOp({ type: "AllBlocksCleared" })).toEqual({ kind: "cleared" });
  });

  it("keeps the order of events and ops within a batch", () => {
    const ops = opsOf(
      pack([TS, [["AllBlocksCleared"], storedArray(), removedArray([102]), ["AllBlocksCleared"]], 0]),
    );
    expect(ops.map((op) => op.kind)).toEqual(["cleared", "stored", "removed", "cleared"]);
  });

  it("skips unknown event kinds, and Dynamo's Ignored, counting them", () => {
    const events = [
      ["BlockInactive", [1]],
      { type: "TierBlocksCleared", medium: "CPU" },
      ["Ignored"],
      storedArray(),
    ];
    const result = decoded(pack([TS, events, 0]));
    expect(result).toMatchObject({ events: 4, skipped: 3, blocks: 2 });
    expect(result.batches[0]?.ops.map((op) => op.kind)).toEqual(["stored"]);
  });

  it("ignores unknown keys of map events and newer fields it has no use for", () => {
    const plain = onlyOp(storedMap());
    const extra = storedMap({
      session_id: "s-1",
      future: { nested: [1, 2] },
      kv_cache_spec_sliding_window: 128,
    });
    expect(onlyOp(extra)).toEqual(plain);
    expect(onlyOp({ type: "BlockRemoved", block_hashes: [5], later: true })).toEqual(
      onlyOp(["BlockRemoved", [5]]),
    );
  });

  it("takes a parent hash and carries the event's block size, whatever the tracker expects", () => {
    const op = stored(
      onlyOp(
        storedArray({ parent_block_hash: 100, block_hashes: [101], token_ids: range(1, 5), block_size: 5 }),
      ),
    );
    expect(op.parent).toBe(100n);
    expect(op.blockSize).toBe(5);
    expect(op.localHashes).toHaveLength(1);
  });
});

describe("block hashes", () => {
  it("reads unsigned 64-bit hashes exactly, and signed ones as their two's complement", () => {
    const top = 0xffff_ffff_ffff_fffen;
    const op = stored(onlyOp(storedArray({ block_hashes: [top, -3n], parent_block_hash: -1 })));
    expect([...op.engineHashes]).toEqual([top, top - 1n]);
    expect(op.parent).toBe(0xffff_ffff_ffff_ffffn);
    const small = stored(onlyOp(storedArray({ block_hashes: [-3803038269031200164n, 2 ** 40] })));
    expect([...small.engineHashes]).toEqual([14643705804678351452n, 2n ** 40n]);
  });

  it("folds digest bytes to their last 8 bytes, big-endian, for hashes and the parent alike", () => {
    const digest = Uint8Array.from(range(0, 31));
    const short = Uint8Array.of(0x01, 0x02, 0x03);
    const op = stored(
      onlyOp(storedArray({ block_hashes: [digest, short], parent_block_hash: digest.slice(0, 16) })),
    );
    expect([...op.engineHashes]).toEqual([0x18191a1b1c1d1e1fn, 0x010203n]);
    expect(op.parent).toBe(0x08090a0b0c0d0e0fn);
    const removed = onlyOp(removedArray([digest, 7]));
    expect(removed).toEqual({
      kind: "removed",
      tier: "device",
      engineHashes: BigUint64Array.of(0x18191a1b1c1d1e1fn, 7n),
    });
  });

  it("hashes the same tokens to the same local hashes whether the engine's hashes are ints or bytes", () => {
    const ints = stored(onlyOp(storedArray()));
    const bytes = stored(
      onlyOp(storedArray({ block_hashes: [new Uint8Array(32), new Uint8Array(32).fill(1)] })),
    );
    expect(bytes.localHashes).toEqual(ints.localHashes);
  });
});
