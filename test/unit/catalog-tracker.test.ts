import { describe, expect, it } from "vitest";
import type { WorkerUpsert } from "../../durable-objects/core/catalog/catalog-record";
import { MAX_CATALOG_RECORD_BYTES } from "../../durable-objects/limits";
import { h, req, T0, tracker, worker } from "./tracker-fixtures";

/**
 * The selection API's worker catalog held by one tracker (`core/catalog/catalog-writes.ts`,
 * `catalog-book.ts`): writes and their answers, the partition's fix, the meeting with the slot
 * tracker's `/register`, and what a DP range change does to live bookings.
 */

const complete = (workerId: bigint, more: Partial<WorkerUpsert> = {}): WorkerUpsert => ({
  workerId,
  model: "model",
  endpoint: `http://w${workerId}:8000`,
  blockSize: 16,
  ...more,
});

const lifecycles = (t: ReturnType<typeof tracker>, now: number) =>
  t.listCatalog(now).map((r) => [r.workerId, r.lifecycle, r.notSchedulableReasons]);

describe("catalog writes", () => {
  it("answers an incomplete record too, and lists it without putting it in the slot tracker", () => {
    const t = tracker();
    const result = t.upsertCatalog({ workerId: 7n, model: "model" }, T0);
    expect(result).toMatchObject({
      ok: true,
      record: {
        lifecycle: "incomplete",
        notSchedulableReasons: ["endpoint is required", "block_size must be greater than 0"],
      },
    });
    expect(t.listWorkers(T0)).toEqual([]);
    expect(t.exists).toBe(false);
    expect(lifecycles(t, T0)).toEqual([
      [7n, "incomplete", ["endpoint is required", "block_size must be greater than 0"]],
    ]);
  });

  it("makes a complete record schedulable and a slot-tracker worker of its ranks", () => {
    const t = tracker();
    expect(t.upsertCatalog(complete(7n, { dpStart: 2, dpSize: 2 }), T0)).toMatchObject({
      ok: true,
      record: { lifecycle: "schedulable", notSchedulableReasons: [] },
    });
    expect(t.listWorkers(T0)).toEqual([{ workerId: 7n, blockSize: 16, dpStart: 2, dpSize: 2 }]);
    expect(t.add(req("a", 7, 3, h(1), 10), T0).ok).toBe(true);
  });

  it("turns an incomplete record schedulable when a PATCH gives it an endpoint", () => {
    const t = tracker();
    t.upsertCatalog({ workerId: 7n, model: "model", blockSize: 16 }, T0);
    expect(t.listWorkers(T0)).toEqual([]);
    const patched = t.patchCatalog(7n, { endpoint: "http://w7" }, T0 + 1);
    expect(patched).toMatchObject({ ok: true, record: { lifecycle: "schedulable", endpoint: "http://w7" } });
    expect(t.listWorkers(T0 + 1)).toEqual([{ workerId: 7n, blockSize: 16, dpStart: 0, dpSize: 1 }]);
  });

  it("answers PATCH and DELETE of an unknown id 404 with Dynamo's text, changing nothing", () => {
    const t = tracker();
    t.upsertCatalog(complete(1n), T0);
    const before = t.listCatalog(T0);
    expect(t.patchCatalog(9n, { endpoint: "x" }, T0)).toEqual({
      ok: false,
      code: "worker_not_found",
      message: "worker 9 not found",
    });
    expect(t.removeCatalog(9n, T0)).toMatchObject({
      ok: false,
      code: "worker_not_found",
      message: "worker 9 not found",
    });
    expect(t.listCatalog(T0)).toEqual(before);
  });

  it("answers DELETE with the final unschedulable record, reasons cleared, and forgets the worker", () => {
    const t = tracker();
    t.upsertCatalog({ workerId: 5n, model: "model", blockSize: 16 }, T0);
    const removed = t.removeCatalog(5n, T0 + 1);
    expect(removed).toMatchObject({
      ok: true,
      deleted: true,
      record: { workerId: 5n, lifecycle: "unschedulable", notSchedulableReasons: [] },
    });
    expect(t.listCatalog(T0 + 2)).toEqual([]);
  });

  it("drops a deleted worker's bookings", () => {
    const t = tracker();
    t.upsertCatalog(complete(1n), T0);
    t.upsertCatalog(complete(2n), T0);
    t.add(req("a", 1, 0, h(1, 2), 10), T0);
    expect(t.removeCatalog(1n, T0 + 1)).toMatchObject({ ok: true, deleted: false });
    expect(t.liveRequests).toBe(0);
    expect(t.listWorkers(T0 + 1).map((w) => w.workerId)).toEqual([2n]);
  });

  it("refuses a record over the text budget with 413 and a new worker past the cap with 429, storing nothing", () => {
    const t = tracker({ limits: { maxWorkers: 1, maxRanks: 4 } });
    const big = t.upsertCatalog(complete(1n, { endpoint: "x".repeat(MAX_CATALOG_RECORD_BYTES) }), T0);
    expect(big).toMatchObject({ ok: false, code: "too_large" });
    t.upsertCatalog(complete(1n), T0);
    expect(t.upsertCatalog(complete(2n), T0)).toMatchObject({ ok: false, code: "limit_exceeded" });
    expect(t.upsertCatalog(complete(1n, { dpSize: 5 }), T0)).toMatchObject({
      ok: false,
      code: "limit_exceeded",
      message: expect.stringContaining("rank limit reached"),
    });
    expect(t.listWorkers(T0)).toEqual([{ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 }]);
  });
});

describe("the partition's fix", () => {
  it("is the first schedulable worker's: another block size fails reconciliation with Dynamo's text", () => {
    const t = tracker();
    t.upsertCatalog(complete(1n), T0);
    const other = t.upsertCatalog(complete(2n, { blockSize: 32 }), T0 + 1);
    expect(other).toMatchObject({
      ok: true,
      record: {
        lifecycle: "incomplete",
        notSchedulableReasons: [
          "reconciliation failed: block_size mismatch for model=model routing_group=default: existing=16 requested=32",
        ],
      },
    });
    const eagle = t.upsertCatalog(complete(3n, { isEagle: true }), T0 + 2);
    expect(eagle).toMatchObject({
      record: {
        notSchedulableReasons: [
          "reconciliation failed: is_eagle mismatch for model=model routing_group=default: existing=false requested=true",
        ],
      },
    });
  });

  it("stays with the founder across a PATCH, and passes to the next worker when the founder leaves", () => {
    const t = tracker();
    t.upsertCatalog(complete(1n), T0);
    t.upsertCatalog(complete(2n, { blockSize: 32 }), T0 + 1);
    t.patchCatalog(1n, { endpoint: "http://moved" }, T0 + 2);
    expect(lifecycles(t, T0 + 2).map(([, l]) => l)).toEqual(["schedulable", "incomplete"]);
    t.removeCatalog(1n, T0 + 3);
    expect(lifecycles(t, T0 + 3)).toEqual([[2n, "schedulable", []]]);
    expect(t.blockSize).toBe(32);
  });

  it("is not handed to an older refused record when the founder changes its block size", () => {
    const t = tracker();
    t.upsertCatalog(complete(1n), T0);
    t.upsertCatalog(complete(2n, { blockSize: 32 }), T0 + 1);
    t.upsertCatalog(complete(3n), T0 + 2);
    t.upsertCatalog(complete(1n, { blockSize: 32 }), T0 + 3);
    expect(lifecycles(t, T0 + 3).map(([, l]) => l)).toEqual(["incomplete", "incomplete", "schedulable"]);
    expect(t.blockSize).toBe(16);
  });
});

describe("where the catalog meets /register", () => {
  it("lists a registered worker as incomplete, endpoint required", () => {
    const t = tracker();
    t.register(worker(4, 0, 2), T0);
    expect(t.listCatalog(T0)).toMatchObject([
      {
        workerId: 4n,
        lifecycle: "incomplete",
        blockSize: 16,
        dpStart: 0,
        dpSize: 2,
        notSchedulableReasons: ["endpoint is required"],
      },
    ]);
  });

  it("refuses /register of a catalog worker as a duplicate, and lets a complete record take a registered one over", () => {
    const t = tracker();
    t.upsertCatalog({ workerId: 4n, model: "model" }, T0);
    expect(t.register(worker(4), T0)).toMatchObject({ ok: false, code: "duplicate_worker" });
    t.register(worker(5, 0, 2), T0);
    t.add(req("a", 5, 1, h(1), 10), T0);
    expect(t.upsertCatalog(complete(5n, { dpSize: 2 }), T0 + 1)).toMatchObject({
      record: { lifecycle: "schedulable" },
    });
    expect(t.request("a")).toBeDefined();
    expect(t.listLoads(T0 + 1).map((l) => l.activePrefillTokens)).toEqual([0, 10]);
  });

  it("keeps a registered worker in the slot tracker when a PATCH changes only its range", () => {
    const t = tracker();
    t.register(worker(5, 0, 2), T0);
    t.add(req("a", 5, 0, h(1), 10), T0);
    expect(t.patchCatalog(5n, { dpSize: 1 }, T0 + 1)).toMatchObject({ record: { lifecycle: "incomplete" } });
    expect(t.listWorkers(T0 + 1)).toEqual([{ workerId: 5n, blockSize: 16, dpStart: 0, dpSize: 1 }]);
    expect(t.liveRequests).toBe(1);
  });

  it("removes a catalog worker from the catalog when /unregister names it", () => {
    const t = tracker();
    t.upsertCatalog(complete(6n), T0);
    expect(t.unregister(6n, T0 + 1)).toEqual({ ok: true, deleted: true });
    expect(t.listCatalog(T0 + 1)).toEqual([]);
  });

  it("lets an incomplete record with the partition's block size into the slot tracker", () => {
    const t = tracker();
    t.upsertCatalog({ workerId: 2n, model: "model", blockSize: 16, dpSize: 2 }, T0);
    expect(t.listWorkers(T0)).toEqual([]);
    t.register(worker(1), T0 + 1);
    expect(t.listWorkers(T0 + 1).map((w) => w.workerId)).toEqual([1n, 2n]);
  });
});

describe("a DP range change", () => {
  it("keeps live bookings on ranks in both ranges and ends those on the ranks it drops", () => {
    const t = tracker();
    t.upsertCatalog(complete(1n, { dpStart: 0, dpSize: 4 }), T0);
    for (const rank of [0, 1, 2, 3]) t.add(req(`r${rank}`, 1, rank, h(rank + 1), 10), T0);
    t.prefillComplete("r2", T0);
    t.patchCatalog(1n, { dpStart: 2, dpSize: 4 }, T0 + 1);
    expect([...t.book.requests.keys()].sort()).toEqual(["r2", "r3"]);
    expect(t.listLoads(T0 + 1).map((l) => [l.dpRank, l.activePrefillTokens, l.activeDecodeBlocks])).toEqual([
      [2, 0, 1],
      [3, 10, 1],
      [4, 0, 0],
      [5, 0, 0],
    ]);
  });

  it("does not bring a dropped rank's bookings back when the range is patched back", () => {
    const t = tracker();
    t.upsertCatalog(complete(1n, { dpSize: 2 }), T0);
    t.add(req("a", 1, 1, h(1), 10), T0);
    t.patchCatalog(1n, { dpSize: 1 }, T0 + 1);
    t.patchCatalog(1n, { dpSize: 2 }, T0 + 2);
    expect(t.liveRequests).toBe(0);
    expect(t.add(req("a", 1, 1, h(1), 10), T0 + 3).ok).toBe(true);
  });

  it("ends every booking when the worker stops being schedulable, even on ranks it keeps", () => {
    const t = tracker();
    t.register(worker(9), T0);
    t.upsertCatalog(complete(1n, { dpSize: 2 }), T0);
    t.add(req("a", 1, 0, h(1), 10), T0);
    const drained = t.upsertCatalog({ workerId: 1n, model: "model", blockSize: 16, dpSize: 2 }, T0 + 1);
    expect(drained).toMatchObject({ record: { lifecycle: "incomplete" } });
    expect(t.listWorkers(T0 + 1).map((w) => w.workerId)).toEqual([1n, 9n]);
    expect(t.liveRequests).toBe(0);
  });
});
