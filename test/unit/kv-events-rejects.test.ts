import { describe, expect, it } from "vitest";
import { MAX_KV_BLOCKS_PER_CALL, MAX_KV_EVENTS_PER_CALL } from "../../src/wire/kv-events";
import {
  decoded,
  eventRefusal,
  onlyOp,
  pack,
  range,
  refusal,
  removedArray,
  storedArray,
  storedMap,
  TS,
} from "./kv-events-fixtures";

const at = (error: string) => ({ status: 400, error: `batch 0, event 0: ${error}` });

describe("malformed bytes: 400", () => {
  it("refuses an empty body", () => {
    expect(refusal(new Uint8Array(0))).toEqual({ status: 400, error: "the body holds no KV event batch" });
  });

  it("refuses truncated or invalid MessagePack, naming the batch it was in", () => {
    const body = pack([TS, [storedArray()], 0]);
    expect(refusal(body.subarray(0, body.length - 3))).toEqual({
      status: 400,
      error: "invalid MessagePack body in batch 0: unexpected end of data",
    });
    expect(refusal(pack([TS, [], 0], [TS, [], 0]).subarray(0, 23))).toEqual({
      status: 400,
      error: "invalid MessagePack body in batch 1: unexpected end of data",
    });
    expect(refusal(Uint8Array.of(0x91, 0xc1)).error).toBe(
      "invalid MessagePack body in batch 0: Unrecognized type byte: 0xc1",
    );
    expect(refusal(Uint8Array.of(0xd4, 0x01, 0x00)).error).toBe(
      "invalid MessagePack body in batch 0: extension type 1 is not accepted",
    );
    expect(refusal(Uint8Array.of(0x81, 0x01, 0x02)).error).toBe(
      "invalid MessagePack body in batch 0: map keys must be strings",
    );
    expect(refusal(Uint8Array.of(0xdd, 0xff, 0xff, 0xff, 0xff)).error).toMatch(
      /^invalid MessagePack body in batch 0: Max length exceeded/,
    );
  });

  it("refuses strings that are not UTF-8 and maps that repeat a key, as every MessagePack body", () => {
    expect(refusal(Uint8Array.of(0x92, 0xc0, 0x91, 0xa2, 0xff, 0xfe))).toEqual({
      status: 400,
      error: "invalid MessagePack body: string at byte 4 is not valid UTF-8",
    });
    const str = (text: string) => [0xa0 | text.length, ...new TextEncoder().encode(text)];
    const repeated = Uint8Array.of(
      0x92,
      0xc0,
      0x91,
      0x82,
      ...str("type"),
      ...str("x"),
      ...str("type"),
      ...str("y"),
    );
    expect(refusal(repeated)).toEqual({
      status: 400,
      error: 'invalid MessagePack body: duplicate key "type"',
    });
  });
});

describe("malformed batches and events: 400 naming batch, event and field", () => {
  it("refuses batches of the wrong shape", () => {
    const batch = (error: string) => ({ status: 400, error: `batch 0: ${error}` });
    expect(refusal(pack("batch"))).toEqual(batch("a batch must be an array or a map"));
    expect(refusal(pack([TS]))).toEqual(batch("a batch array must be [ts, events, data_parallel_rank?]"));
    expect(refusal(pack([TS, {}]))).toEqual(batch("events must be an array"));
    expect(refusal(pack({ ts: TS }))).toEqual(batch("events must be an array"));
    expect(refusal(pack(["now", []]))).toEqual(batch("ts must be a number"));
    const rank = batch("data_parallel_rank must be a non-negative 32-bit integer or nil");
    for (const bad of [-1, 2 ** 31, 1.5, "0"]) expect(refusal(pack([TS, [], bad]))).toEqual(rank);
    expect(refusal(pack([TS, [], 0], [TS, [], -1])).error).toBe(
      "batch 1: data_parallel_rank must be a non-negative 32-bit integer or nil",
    );
  });

  it("refuses events without a kind to go by", () => {
    expect(eventRefusal("BlockStored")).toEqual(at("an event must be an array or a map"));
    expect(eventRefusal([])).toEqual(at("an event array must start with its kind, a string"));
    expect(eventRefusal([1, [1]])).toEqual(at("an event array must start with its kind, a string"));
    expect(eventRefusal({ block_hashes: [1] })).toEqual(at("an event map must have a string type"));
    expect(refusal(pack([TS, [["AllBlocksCleared"], 7], 0])).error).toBe(
      "batch 0, event 1: an event must be an array or a map",
    );
  });

  it("refuses block hashes that are not 64-bit integers or bytes", () => {
    expect(eventRefusal(storedMap({ block_hashes: undefined }))).toEqual(at("block_hashes must be an array"));
    expect(eventRefusal(["BlockRemoved", 5])).toEqual(at("block_hashes must be an array"));
    for (const bad of [1.5, 1e20, "5", null, [5]]) {
      expect(eventRefusal(storedArray({ block_hashes: [1, bad] }))).toEqual(
        at("block_hashes[1] is not a 64-bit integer or bytes"),
      );
    }
    expect(eventRefusal(removedArray([2 ** 60]))).toEqual(
      at("block_hashes[0] is not a 64-bit integer or bytes"),
    );
    expect(eventRefusal(storedArray({ parent_block_hash: "p" }))).toEqual(
      at("parent_block_hash must be a 64-bit integer, bytes or nil"),
    );
  });

  it("refuses tokens that are not u32s, or pairs of them", () => {
    expect(eventRefusal(storedMap({ token_ids: "1 2 3" }))).toEqual(at("token_ids must be an array"));
    for (const bad of [-1, 2 ** 32, 1.5, "x", null]) {
      const tokens = range(1, 32);
      tokens[2] = bad as number;
      expect(eventRefusal(storedArray({ token_ids: tokens }))).toEqual(at("token_ids[2] is not a u32"));
    }
    expect(
      eventRefusal(storedArray({ token_ids: [[1, 2], 3], block_size: 1, block_hashes: [1, 2] })),
    ).toEqual(at("token_ids[1] is not a pair of u32s"));
    expect(
      eventRefusal(storedArray({ token_ids: [[1, 2], [3]], block_size: 1, block_hashes: [1, 2] })),
    ).toEqual(at("token_ids[1] is not a pair of u32s"));
  });

  it("refuses a block size that is not a u32, and a missing one beside tokens", () => {
    for (const bad of [-1, 1.5, "16", 2 ** 32]) {
      expect(eventRefusal(storedArray({ block_size: bad }))).toEqual(at("block_size must be a u32"));
    }
    expect(eventRefusal(storedMap({ block_size: undefined }))).toEqual(at("block_size must be a u32"));
  });

  it("refuses named fields and positions of the wrong type", () => {
    const textual = ["medium", "lora_name", "cache_salt", "kv_cache_spec_kind", "locality", "ownership"];
    for (const field of textual) {
      expect(eventRefusal(storedMap({ [field]: 5 }))).toEqual(at(`${field} must be a string or nil`));
    }
    expect(eventRefusal(storedArray({ medium: 1 }))).toEqual(at("medium must be a string or nil"));
    expect(eventRefusal(storedArray({ lora_name: ["a"] }))).toEqual(at("lora_name must be a string or nil"));
    expect(
      eventRefusal(["BlockStored", [1, 2], null, range(1, 32), 16, null, "GPU", { cache_salt: 1 }]),
    ).toEqual(at("cache_salt must be a string or nil"));
    expect(eventRefusal(storedMap({ group_idx: -1 }))).toEqual(at("group_idx must be a u32 or nil"));
    expect(eventRefusal({ type: "BlockRemoved", block_hashes: [1], medium: true })).toEqual(
      at("medium must be a string or nil"),
    );
    expect(eventRefusal({ type: "AllBlocksCleared", ownership: 1 })).toEqual(
      at("ownership must be a string or nil"),
    );
  });

  it("passes over tail positions of another type, as Dynamo does, instead of refusing them", () => {
    const plain = onlyOp(storedArray());
    expect(onlyOp([...storedArray().slice(0, 9), "full_attention", 0, true])).toEqual(plain);
    expect(onlyOp([...removedArray([5], "GPU"), { later: 1 }, 0])).toMatchObject({ kind: "removed" });
  });

  it("refuses a malformed block_mm_infos, which is hashed, but never extra_keys, which is opaque", () => {
    const mm = (infos: unknown) => eventRefusal(storedMap({ block_mm_infos: infos }));
    expect(mm({})).toEqual(at("block_mm_infos must be an array"));
    expect(mm([null, 5])).toEqual(at("block_mm_infos[1] must be nil or a map with mm_objects"));
    expect(mm([{ mm_objects: [{ mm_hash: -1 }] }])).toEqual(
      at("block_mm_infos[0].mm_objects[0].mm_hash must be a u64"),
    );
    expect(mm([{ mm_objects: [{}] }])).toEqual(at("block_mm_infos[0].mm_objects[0].mm_hash must be a u64"));
    for (const extraKeys of [5, [5], [[{}], "x"], [[null, [1, 2, 3]]]]) {
      expect(onlyOp(storedMap({ extra_keys: extraKeys }))).not.toBeNull();
    }
  });

  it("refuses malformed fields even of an event it would skip", () => {
    expect(eventRefusal(storedArray({ medium: "FS", token_ids: ["x"] }))).toEqual(
      at("token_ids[0] is not a u32"),
    );
    expect(eventRefusal(storedMap({ ownership: "kvcr", block_hashes: 5 }))).toEqual(
      at("block_hashes must be an array"),
    );
  });
});

describe("inconsistent stores: 422", () => {
  const at422 = (error: string) => ({ status: 422, error: `batch 0, event 0: ${error}` });

  it("refuses tokens that are not exactly the blocks' tokens", () => {
    expect(eventRefusal(storedArray({ token_ids: range(1, 31) }))).toEqual(
      at422("token_ids has 31 tokens; 2 blocks of 16 need 32"),
    );
    expect(eventRefusal(storedArray({ token_ids: range(1, 33) }))).toEqual(
      at422("token_ids has 33 tokens; 2 blocks of 16 need 32"),
    );
    expect(eventRefusal(storedMap({ block_hashes: [], token_ids: range(1, 16) }))).toEqual(
      at422("token_ids has 16 tokens; 0 blocks of 16 need 0"),
    );
    const pairs = range(1, 7).map((t) => [t, t + 1]);
    expect(eventRefusal(storedArray({ token_ids: pairs, block_size: 4 }))).toEqual(
      at422("token_ids has 7 token pairs; 2 blocks of 4 need 8"),
    );
  });

  it("refuses a zero block size beside tokens", () => {
    expect(eventRefusal(storedArray({ block_size: 0 }))).toEqual(at422("block_size is 0"));
  });

  it("leaves an inconsistent event it skips unrefused", () => {
    expect(onlyOp(storedArray({ medium: "FS", token_ids: range(1, 5) }))).toBeNull();
  });
});

describe("per-call caps: 413", () => {
  it("refuses more than MAX_KV_EVENTS_PER_CALL events over all batches", () => {
    const half = new Array(MAX_KV_EVENTS_PER_CALL / 2).fill(["AllBlocksCleared"]);
    expect(decoded(pack([TS, half, 0], [TS, half, 0])).events).toBe(MAX_KV_EVENTS_PER_CALL);
    expect(refusal(pack([TS, half, 0], [TS, half, 0], [TS, [["AllBlocksCleared"]], 0]))).toEqual({
      status: 413,
      error: "more than 4096 KV events in one call",
    });
  });

  it("refuses more than MAX_KV_BLOCKS_PER_CALL blocks, stored and removed together", () => {
    const hashes = range(1, MAX_KV_BLOCKS_PER_CALL / 2);
    const store = storedArray({ block_hashes: hashes, token_ids: hashes, block_size: 1 });
    expect(decoded(pack([TS, [store, removedArray(hashes)], 0])).blocks).toBe(MAX_KV_BLOCKS_PER_CALL);
    expect(refusal(pack([TS, [store, removedArray(hashes), removedArray([1])], 0]))).toEqual({
      status: 413,
      error: "more than 65536 KV blocks in one call",
    });
  });
});
