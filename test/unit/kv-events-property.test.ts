import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hashPrompt } from "../../durable-objects/core/hashing/prompt-hashes";
import { PUBLIC_TRACKING } from "../../durable-objects/core/hashing/tracking-config";
import { seededRng } from "../../durable-objects/core/routing/rng";
import { decodeKvEventBody, type KvDecodeResult } from "../../src/wire/kv-events";
import { decoded, pack, removedArray, stored, storedArray, storedMap, TS } from "./kv-events-fixtures";

function expectTotal(result: KvDecodeResult): void {
  if (result.ok) {
    expect(result.events).toBeGreaterThanOrEqual(result.skipped);
    expect(result.batches.flatMap((b) => b.ops)).toHaveLength(result.events - result.skipped);
  } else {
    expect([400, 413, 422]).toContain(result.status);
    expect(result.error.length).toBeGreaterThan(0);
  }
}

/** A well-formed body with every kind of event, to corrupt. */
const VALID = pack(
  [TS, [storedArray(), removedArray([101], "GPU", 0), ["AllBlocksCleared"]], 0],
  [
    TS,
    [
      storedMap({
        extra_keys: [null, null],
        group_idx: 0,
        kv_cache_spec_kind: "full_attention",
        parent_block_hash: 9,
      }),
    ],
    null,
  ],
  { ts: TS, events: [{ type: "BlockRemoved", block_hashes: [new Uint8Array(32)], medium: "CPU" }] },
);

/** Values of the shapes events are made of, nested, so random events reach deep into the reader. */
const wireValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(
      "BlockStored",
      "BlockRemoved",
      "AllBlocksCleared",
      "GPU",
      "CPU",
      "full_attention",
      "LOCAL",
    ),
    fc.constantFrom("type", "block_hashes", "token_ids", "block_size", "medium", "group_idx", "extra_keys"),
    fc.integer({ min: -5, max: 70 }),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
    fc.double(),
    fc.constant(null),
    fc.boolean(),
    fc.uint8Array({ maxLength: 40 }),
    fc.string({ maxLength: 8 }),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie("value"), { maxKeys: 5 }),
  ),
})).value;

describe("the decoder is total", () => {
  it("gives a result, never an exception, for random bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (body) => {
        expectTotal(decodeKvEventBody(body, {}));
      }),
      { numRuns: 3000 },
    );
  });

  it("gives a result for a valid body with bytes changed or cut short", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(VALID.length - 1), fc.nat(255)), { minLength: 1, maxLength: 4 }),
        fc.nat(VALID.length),
        (edits, cut) => {
          const corrupt = VALID.slice(0, Math.max(cut, 1));
          for (const [i, b] of edits) if (i < corrupt.length) corrupt[i] = b;
          expectTotal(decodeKvEventBody(corrupt, {}));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("gives a result for well-formed MessagePack of random event-like values", () => {
    const event = fc.oneof(
      fc
        .tuple(
          fc.constantFrom("BlockStored", "BlockRemoved", "AllBlocksCleared"),
          fc.array(wireValue, { maxLength: 13 }),
        )
        .map(([tag, rest]) => [tag, ...rest]),
      fc
        .tuple(
          fc.constantFrom("BlockStored", "BlockRemoved", "AllBlocksCleared"),
          fc.dictionary(
            fc.constantFrom(
              "block_hashes",
              "parent_block_hash",
              "token_ids",
              "block_size",
              "lora_id",
              "medium",
              "lora_name",
              "cache_salt",
              "extra_keys",
              "block_mm_infos",
              "group_idx",
              "kv_cache_spec_kind",
              "locality",
              "ownership",
            ),
            wireValue,
          ),
        )
        .map(([type, fields]) => ({ type, ...fields })),
      wireValue,
    );
    const batch = fc.oneof(
      fc.tuple(wireValue, fc.array(event, { maxLength: 4 }), wireValue),
      fc.record({ ts: wireValue, events: fc.array(event, { maxLength: 4 }), data_parallel_rank: wireValue }),
      wireValue,
    );
    fc.assert(
      fc.property(fc.array(batch, { minLength: 1, maxLength: 3 }), (batches) => {
        const body = pack(...batches);
        expectTotal(decodeKvEventBody(body, {}));
      }),
      { numRuns: 2000 },
    );
  });
  it("gives a result for valid events with some fields replaced by random values", () => {
    const base = [
      storedArray(),
      storedMap({ extra_keys: [null, null], group_idx: 0 }),
      removedArray([5], "GPU", 0),
    ];
    const edit = fc.tuple(
      fc.nat(2),
      fc.array(fc.tuple(fc.nat(13), wireValue), { minLength: 1, maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        const events = edits.map(([which, changes]) => {
          const event = structuredClone(base[which]!) as unknown[] | Record<string, unknown>;
          for (const [at, value] of changes) {
            if (Array.isArray(event)) event[1 + (at % (event.length + 1))] = value;
            else event[Object.keys(event)[at % Object.keys(event).length]!] = value;
          }
          return event;
        });
        expectTotal(decodeKvEventBody(pack([TS, events, 0]), {}));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("stored blocks hash as prompts do, for any run", () => {
  it("gives every kept store the query side's block hashes of its tokens, in either form", () => {
    const run = fc.record({
      blockSize: fc.integer({ min: 1, max: 24 }),
      blocks: fc.integer({ min: 1, max: 6 }),
      tokens: fc.array(fc.nat({ max: 0xffffffff }), { minLength: 24 * 6 + 1, maxLength: 24 * 6 + 1 }),
      loraName: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: null }),
      cacheSalt: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: null }),
      isEagle: fc.boolean(),
      asMap: fc.boolean(),
    });
    fc.assert(
      fc.property(run, ({ blockSize, blocks, tokens, loraName, cacheSalt, isEagle, asMap }) => {
        const prompt = tokens.slice(0, blocks * blockSize + (isEagle ? 1 : 0));
        const tokenIds = isEagle ? prompt.slice(0, -1).map((t, i) => [t, prompt[i + 1]]) : prompt;
        const hashes = Array.from({ length: blocks }, (_, i) => BigInt(i + 1) << 40n);
        const fields = {
          block_hashes: hashes,
          token_ids: tokenIds,
          block_size: blockSize,
          lora_name: loraName,
        };
        const event = asMap
          ? storedMap({ ...fields, cache_salt: cacheSalt })
          : storedArray({
              ...fields,
              extra_keys: cacheSalt === null ? null : [[`dynamo-cache-salt:${cacheSalt}`]],
            });
        const op = stored(decoded(pack([TS, [event], 0])).batches[0]?.ops[0]);
        const partition = { modelName: "m", routingGroup: "g", blockSize, isEagle };
        const options = { tracking: PUBLIC_TRACKING, assumeKvReuse: true, rng: seededRng(1) };
        const query = hashPrompt({ tokenIds: prompt, loraName, cacheSalt }, partition, options);
        expect(op.localHashes).toEqual(query.blockHashes);
      }),
      { numRuns: 300 },
    );
  });
});
