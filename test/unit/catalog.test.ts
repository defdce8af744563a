import { describe, expect, it } from "vitest";
import { buildRecord } from "../../durable-objects/core/catalog/build-record";
import { CATALOG_CONFIG, type WorkerUpsert } from "../../durable-objects/core/catalog/catalog-record";
import { dpRanks, rankChange } from "../../durable-objects/core/catalog/dp-ranks";
import { deletionOf, transitionOf } from "../../durable-objects/core/catalog/lifecycle";
import { MAX_CATALOG_RECORD_BYTES } from "../../durable-objects/limits";
import { BIG_ID, built, COMPLETE, OPEN, patched } from "./catalog-fixtures";

describe("not_schedulable_reasons", () => {
  it("names each missing item with Dynamo's text", () => {
    const cases: [WorkerUpsert, string][] = [
      [{ ...COMPLETE, endpoint: undefined }, "endpoint is required"],
      [{ ...COMPLETE, endpoint: "" }, "endpoint is required"],
      [{ ...COMPLETE, blockSize: undefined }, "block_size must be greater than 0"],
      [{ ...COMPLETE, blockSize: 0 }, "block_size must be greater than 0"],
      [{ ...COMPLETE, dpSize: 0 }, "data_parallel_size must be greater than 0"],
    ];
    for (const [input, reason] of cases) expect(built(input).record.notSchedulableReasons).toEqual([reason]);
  });

  it("lists every missing item in Dynamo's order: endpoint, block size, DP size", () => {
    const { record } = built({ workerId: 1n, dpSize: 0 });
    expect(record.notSchedulableReasons).toEqual([
      "endpoint is required",
      "block_size must be greater than 0",
      "data_parallel_size must be greater than 0",
    ]);
  });

  it("asks for max_num_batched_tokens only while queueing is on, after the DP size", () => {
    const queueing = { config: { ...CATALOG_CONFIG, queueingEnabled: true }, fix: undefined };
    expect(built(COMPLETE).record.lifecycle).toBe("schedulable");
    expect(built({ workerId: 1n, dpSize: 0 }, queueing).record.notSchedulableReasons.slice(2)).toEqual([
      "data_parallel_size must be greater than 0",
      "max_num_batched_tokens is required while queueing is enabled",
    ]);
    expect(built({ ...COMPLETE, maxNumBatchedTokens: 8192n }, queueing).record.lifecycle).toBe("schedulable");
  });

  it("asks, only with KV events on, for a publisher per rank, the scalar one serving a one-rank worker", () => {
    const events = { config: { ...CATALOG_CONFIG, kvEventsEnabled: true }, fix: undefined };
    const ranks = { ...COMPLETE, dpStart: 4, dpSize: 3, kvEventsEndpoint: "tcp://w:5557" };
    expect(built(ranks).record.notSchedulableReasons).toEqual([]);
    expect(built(ranks, events).record.notSchedulableReasons).toEqual([
      "kv_events endpoint is required for dp_rank 4",
      "kv_events endpoint is required for dp_rank 5",
      "kv_events endpoint is required for dp_rank 6",
    ]);
    const mapped = {
      ...ranks,
      kvEventsEndpoints: new Map([
        [4, "tcp://a"],
        [5, ""],
        [6, "tcp://c"],
      ]),
    };
    expect(built(mapped, events).record.notSchedulableReasons).toEqual([
      "kv_events endpoint is required for dp_rank 5",
    ]);
    const single = {
      ...COMPLETE,
      dpStart: 9,
      kvEventsEndpoint: "tcp://w:5557",
      replayEndpoint: "tcp://w:5558",
    };
    expect(built(single, events).record.lifecycle).toBe("schedulable");
    const replayMany = {
      ...mapped,
      kvEventsEndpoints: new Map([
        [4, "a"],
        [5, "b"],
        [6, "c"],
      ]),
      replayEndpoint: "r",
    };
    expect(built(replayMany, events).record.notSchedulableReasons).toEqual([
      "replay_endpoint is supported only for data_parallel_size 1",
    ]);
  });
});

describe("POST /workers: a full replace, judged afresh", () => {
  it("answers an incomplete record as a success, with its reasons", () => {
    const result = buildRecord({ workerId: BIG_ID }, OPEN);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.record).toMatchObject({
      workerId: BIG_ID,
      model: "default",
      tenant: "default",
      lifecycle: "incomplete",
      notSchedulableReasons: ["endpoint is required", "block_size must be greater than 0"],
    });
    expect(result.fix).toBeUndefined();
  });

  it("keeps an absent DP range absent, while scheduling it as start 0, size 1", () => {
    const { record } = built(COMPLETE);
    expect(record.dpStart).toBeUndefined();
    expect(record.dpSize).toBeUndefined();
    expect(dpRanks(record)).toEqual({ start: 0, end: 1 });
  });

  it("lets the first schedulable worker fix the partition's block size and eagle flag", () => {
    expect(built(COMPLETE).fix).toEqual({ blockSize: 16, isEagle: false });
    expect(built({ ...COMPLETE, isEagle: true }).fix).toEqual({ blockSize: 16, isEagle: true });
  });

  it("refuses a block size or eagle flag other than the partition's with Dynamo's texts", () => {
    const fix = { blockSize: 32, isEagle: false };
    const sized = built({ ...COMPLETE, model: "llama", tenant: "acme" }, { config: CATALOG_CONFIG, fix });
    expect(sized.record.lifecycle).toBe("incomplete");
    expect(sized.record.notSchedulableReasons).toEqual([
      "reconciliation failed: block_size mismatch for model=llama routing_group=acme: existing=32 requested=16",
    ]);
    expect(sized.fix).toEqual(fix);
    const eagle = built(
      { ...COMPLETE, isEagle: true },
      { config: CATALOG_CONFIG, fix: { blockSize: 16, isEagle: false } },
    );
    expect(eagle.record.notSchedulableReasons).toEqual([
      "reconciliation failed: is_eagle mismatch for model=default routing_group=default: existing=false requested=true",
    ]);
  });

  it("reconciles only a record whose own metadata is complete", () => {
    const fix = { blockSize: 32, isEagle: false };
    const { record } = built({ workerId: 1n, blockSize: 16 }, { config: CATALOG_CONFIG, fix });
    expect(record.notSchedulableReasons).toEqual(["endpoint is required"]);
    expect(built({ workerId: 1n, blockSize: 16 }).fix).toBeUndefined();
  });

  it("keeps taints as a set, in UTF-8 byte order", () => {
    const { record } = built({ ...COMPLETE, taints: ["zone=b", "\u{1F600}", "zone=a", "\uFF5E", "zone=b"] });
    expect(record.taints).toEqual(["zone=a", "zone=b", "\uFF5E", "\u{1F600}"]);
  });

  it("refuses a record whose text exceeds the cap, as too large", () => {
    const urls = new Map(Array.from({ length: 200 }, (_, rank) => [rank, `tcp://${"h".repeat(80)}:${rank}`]));
    const result = buildRecord({ ...COMPLETE, kvEventsEndpoints: urls }, OPEN);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe("too_large");
    expect(result.message).toContain(`at most ${MAX_CATALOG_RECORD_BYTES} allowed`);
  });
});

describe("PATCH /workers/{id}", () => {
  const base = built({
    ...COMPLETE,
    stableRoutingId: "s-1",
    taints: ["a", "b"],
    topologyDomains: new Map([
      ["zone", "z1"],
      ["rack", "r1"],
    ]),
    kvEventsEndpoints: new Map([[0, "tcp://old"]]),
  }).record;
  const fix = { blockSize: 16, isEagle: false };

  it("keeps every field the patch leaves out, so no field can be cleared", () => {
    const record = patched(base, { endpoint: undefined, stableRoutingId: undefined, taints: undefined }, fix);
    expect(record).toEqual(base);
  });

  it("replaces present scalars and replaces maps and sets whole", () => {
    const record = patched(
      base,
      { endpoint: "http://new", topologyDomains: new Map([["zone", "z2"]]), taints: [] },
      fix,
    );
    expect(record.endpoint).toBe("http://new");
    expect(record.stableRoutingId).toBe("s-1");
    expect([...record.topologyDomains]).toEqual([["zone", "z2"]]);
    expect(record.taints).toEqual([]);
    expect([...record.kvEventsEndpoints]).toEqual([[0, "tcp://old"]]);
  });

  it("judges the merged record again: a missing field given, or a mismatch introduced", () => {
    const incomplete = built({ workerId: 3n, blockSize: 16 }, { config: CATALOG_CONFIG, fix }).record;
    expect(patched(incomplete, { endpoint: "http://w3" }, fix).lifecycle).toBe("schedulable");
    const mismatched = patched(base, { blockSize: 64 }, fix);
    expect(mismatched.lifecycle).toBe("incomplete");
    expect(mismatched.notSchedulableReasons).toEqual([
      "reconciliation failed: block_size mismatch for model=default routing_group=default: existing=16 requested=64",
    ]);
  });

  it("keeps bookings on the ranks both DP ranges share and ends them on dropped ranks", () => {
    const wide = patched(base, { dpStart: 0, dpSize: 4 }, fix);
    const moved = patched(wide, { dpStart: 2 }, fix);
    expect(dpRanks(moved)).toEqual({ start: 2, end: 6 });
    const transition = transitionOf(wide, moved, fix, fix);
    expect(transition.drains).toBe(false);
    expect(transition.ranks).toEqual({
      kept: { start: 2, end: 4 },
      removed: [{ start: 0, end: 2 }],
      added: [{ start: 4, end: 6 }],
    });
    expect(transition.endsBookingsOn).toEqual([{ start: 0, end: 2 }]);
    expect(rankChange({ start: 0, end: 8 }, { start: 2, end: 4 }).removed).toEqual([
      { start: 0, end: 2 },
      { start: 4, end: 8 },
    ]);
  });

  it("drains a schedulable worker that turns incomplete: all its bookings end", () => {
    const wide = patched(base, { dpSize: 2 }, fix);
    const broken = patched(wide, { endpoint: "" }, fix);
    const transition = transitionOf(wide, broken, fix, fix);
    expect(transition.drains).toBe(true);
    expect(transition.endsBookingsOn).toEqual([{ start: 0, end: 2 }]);
    expect(transition.ranks.kept).toEqual({ start: 0, end: 2 });
  });

  it("drains a worker that moves partition, leaving every rank in the old tracker", () => {
    const moved = built({ ...COMPLETE, model: "other" }).record;
    const transition = transitionOf(base, moved, fix, { blockSize: 16, isEagle: false });
    expect(transition).toMatchObject({ drains: true, moves: true });
    expect(transition.ranks).toEqual({
      kept: undefined,
      removed: [{ start: 0, end: 1 }],
      added: [{ start: 0, end: 1 }],
    });
  });

  it("saturates a DP range past u32 instead of refusing it", () => {
    expect(dpRanks({ dpStart: 4294967290, dpSize: 100 })).toEqual({ start: 4294967290, end: 4294967295 });
  });
});

describe("DELETE /workers/{id}", () => {
  it("drains, then answers the unschedulable record with its reasons cleared", () => {
    const { record } = built({ workerId: 9n, endpoint: "http://w9" });
    const { draining, final } = deletionOf(record);
    expect(draining).toMatchObject({ lifecycle: "draining", notSchedulableReasons: [] });
    expect(final).toEqual({ ...record, lifecycle: "unschedulable", notSchedulableReasons: [] });
  });
});
