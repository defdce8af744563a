import { describe, expect, it } from "vitest";
import { MAX_HASHES_PER_CALL } from "../../durable-objects/limits";
import {
  decodeBlocks,
  h,
  prefillTokens,
  req,
  T0,
  tracker,
  U32_MAX,
  U64_MAX,
  worker,
} from "./tracker-fixtures";

const ok = { ok: true };
const idle = (workerId: bigint, dpRank: number) => ({
  workerId,
  dpRank,
  activePrefillTokens: 0,
  activeDecodeBlocks: 0,
});

describe("worker registration", () => {
  it("rejects a zero block size, a zero dp size and a dp range past u32::MAX with Dynamo's texts", () => {
    const t = tracker();
    expect(t.register(worker(1, 0, 1, 0), T0)).toEqual({
      ok: false,
      code: "invalid_block_size",
      message: "block_size must be greater than 0",
    });
    expect(t.register(worker(1, 0, 0), T0)).toEqual({
      ok: false,
      code: "invalid_dp_size",
      message: "dp_size must be greater than 0",
    });
    expect(t.register(worker(1, U32_MAX, 1), T0)).toEqual({
      ok: false,
      code: "invalid_dp_range",
      message: "dp range overflows u32: start=4294967295 size=1",
    });
    expect(t.register(worker(1, 0, 0, 0), T0)).toMatchObject({ code: "invalid_block_size" });
    expect(t.exists).toBe(false);
    expect(t.listWorkers(T0)).toEqual([]);
  });

  it("accepts a dp range whose exclusive end is exactly u32::MAX", () => {
    const t = tracker();
    expect(t.register(worker(1, U32_MAX - 2, 2), T0)).toEqual({ ok: true, created: true });
    expect(t.listLoads(T0)).toEqual([idle(1n, U32_MAX - 2), idle(1n, U32_MAX - 1)]);
  });

  it("expands a dp range into one idle rank per data-parallel rank, and only those ranks take requests", () => {
    const t = tracker();
    expect(t.register(worker(1, 2, 2), T0)).toEqual({ ok: true, created: true });
    expect(t.listLoads(T0)).toEqual([idle(1n, 2), idle(1n, 3)]);
    expect(t.listWorkers(T0)).toEqual([{ workerId: 1n, blockSize: 16, dpStart: 2, dpSize: 2 }]);
    expect(t.add(req("low", 1, 1, h(1)), T0)).toMatchObject({ code: "rank_not_found" });
    expect(t.add(req("high", 1, 4, h(1)), T0)).toMatchObject({ code: "rank_not_found" });
    expect(t.add(req("in", 1, 3, h(1)), T0)).toEqual(ok);
    expect(decodeBlocks(t, T0)).toEqual([0, 1]);
  });

  it("refuses a worker id that is already registered, even with a different range, and keeps the first", () => {
    const t = tracker();
    t.register(worker(1, 2, 2), T0);
    expect(t.register(worker(1, 0, 1), T0)).toEqual({
      ok: false,
      code: "duplicate_worker",
      message: "worker 1 already registered for model=model tenant=default",
    });
    expect(t.listWorkers(T0)).toEqual([{ workerId: 1n, blockSize: 16, dpStart: 2, dpSize: 2 }]);
  });

  it("refuses a block size other than the tracker's, before looking at the worker id", () => {
    const t = tracker();
    t.register(worker(1), T0);
    const mismatch = {
      ok: false,
      code: "block_size_mismatch",
      message: "block_size mismatch for model=model tenant=default: existing=16, requested=32",
    };
    expect(t.register(worker(2, 0, 1, 32), T0)).toEqual(mismatch);
    expect(t.register(worker(1, 0, 1, 32), T0)).toEqual(mismatch);
    expect(t.register(worker(2, 0, 1, 16), T0)).toEqual({ ok: true, created: false });
  });
});

describe("worker removal", () => {
  it("deletes the tracker with its requests when the busy last worker leaves; a new register starts empty", () => {
    const t = tracker();
    t.register(worker(1), T0);
    t.add(req("req-1", 1, 0, h(1, 2), 8), T0);
    expect(t.unregister(1n, T0)).toEqual({ ok: true, deleted: true });
    expect(t.exists).toBe(false);
    expect(t.blockSize).toBeUndefined();
    expect(t.listWorkers(T0)).toEqual([]);
    expect(t.listLoads(T0)).toEqual([]);
    expect(t.nextDeadline()).toBeUndefined();
    expect(t.add(req("req-1", 1, 0, h(1)), T0)).toMatchObject({ code: "tracker_not_found" });

    expect(t.register(worker(1, 0, 1, 32), T0)).toEqual({ ok: true, created: true });
    expect(t.blockSize).toBe(32);
    expect(t.listLoads(T0)).toEqual([idle(1n, 0)]);
    expect(t.add(req("req-1", 1, 0, h(3)), T0)).toEqual(ok);
    expect(decodeBlocks(t, T0)).toEqual([1]);
  });

  it("answers worker_not_found naming the model and tenant, with or without workers", () => {
    const t = tracker({ model: "m", tenant: "t" });
    const notFound = {
      ok: false,
      code: "worker_not_found",
      message: "worker 9 not found for model=m tenant=t",
    };
    expect(t.unregister(9n, T0)).toEqual(notFound);
    t.register(worker(1), T0);
    expect(t.unregister(9n, T0)).toEqual(notFound);
    expect(t.listWorkers(T0)).toHaveLength(1);
  });

  it("drops only the leaving worker's requests, whose ids can then be added again", () => {
    const t = tracker();
    t.register(worker(1, 0, 2), T0);
    t.register(worker(2), T0);
    t.add(req("a", 1, 0, h(1, 2), 5), T0);
    t.add(req("b", 1, 1, h(3), 6), T0);
    t.add(req("c", 2, 0, h(1, 2, 3), 7), T0);
    expect(t.unregister(1n, T0)).toEqual({ ok: true, deleted: false });
    expect(t.listLoads(T0)).toEqual([
      { workerId: 2n, dpRank: 0, activePrefillTokens: 7, activeDecodeBlocks: 3 },
    ]);
    expect(t.liveRequests).toBe(1);
    expect(t.free("a", T0)).toEqual(ok);
    expect(t.prefillComplete("b", T0)).toMatchObject({ code: "request_not_found" });
    expect(t.add(req("a", 2, 0, h(9), 1), T0)).toEqual(ok);
    expect(t.listLoads(T0)).toEqual([
      { workerId: 2n, dpRank: 0, activePrefillTokens: 8, activeDecodeBlocks: 4 },
    ]);
  });
});

describe("tracker scope", () => {
  it("keeps worker ids and request ids of two tenants independent", () => {
    const a = tracker({ tenant: "a" });
    const b = tracker({ tenant: "b" });
    a.register(worker(1), T0);
    b.register(worker(1, 0, 1, 32), T0);
    expect(a.add(req("r", 1, 0, h(1, 2), 4), T0)).toEqual(ok);
    expect(b.add(req("r", 1, 0, h(1), 9), T0)).toEqual(ok);
    expect(a.register(worker(1), T0)).toMatchObject({
      message: "worker 1 already registered for model=model tenant=a",
    });
    a.unregister(1n, T0);
    expect(b.listLoads(T0)).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 9, activeDecodeBlocks: 1 },
    ]);
    expect(b.listWorkers(T0)).toEqual([{ workerId: 1n, blockSize: 32, dpStart: 0, dpSize: 1 }]);
  });

  it("answers tracker_not_found to every request operation while it has no workers", () => {
    const t = tracker({ model: "m", tenant: "t" });
    const missing = { ok: false, code: "tracker_not_found", message: "no slot tracker for model=m tenant=t" };
    expect(t.add(req("r", 1, 0, h(1)), T0)).toEqual(missing);
    expect(t.prefillComplete("r", T0)).toEqual(missing);
    expect(t.free("r", T0)).toEqual(missing);
    expect(t.potentialLoads(h(1), 0, T0)).toEqual(missing);
    expect(t.listLoads(T0)).toEqual([]);
    expect(t.listWorkers(T0)).toEqual([]);
  });
});

describe("request lifecycle", () => {
  it("keeps arrival order with strict admission: an early free is forgotten and the later add counts", () => {
    const t = tracker();
    t.register(worker(1), T0);
    expect(t.free("early-free", T0)).toEqual(ok);
    expect(t.prefillComplete("early-complete", T0)).toEqual({
      ok: false,
      code: "request_not_found",
      message: "Request early-complete not found",
    });
    expect(t.add(req("bad-rank", 1, 1, h(1)), T0)).toEqual({
      ok: false,
      code: "rank_not_found",
      message: "Worker WorkerWithDpRank { worker_id: 1, dp_rank: 1 } not found",
    });
    expect(t.add(req("bad-worker", 2, 0, h(1)), T0)).toMatchObject({ code: "rank_not_found" });
    expect(t.add(req("early-free", 1, 0, h(1, 2), 8), T0)).toEqual(ok);
    expect(t.add(req("early-free", 1, 0, h(1, 2), 8), T0)).toEqual({
      ok: false,
      code: "duplicate_request",
      message:
        "Request early-free already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 0 })",
    });
    expect(prefillTokens(t, T0)).toEqual([8]);
    expect(t.prefillComplete("early-free", T0)).toEqual(ok);
    expect(t.prefillComplete("early-free", T0)).toEqual(ok);
    expect(t.listLoads(T0)).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 0, activeDecodeBlocks: 2 },
    ]);
    expect(t.free("early-free", T0)).toEqual(ok);
    expect(t.free("early-free", T0)).toEqual(ok);
    expect(decodeBlocks(t, T0)).toEqual([0]);

    expect(t.add(req("early-complete", 1, 0, h(3), 8), T0)).toEqual(ok);
    expect(prefillTokens(t, T0)).toEqual([8]);
    expect(t.free("early-complete", T0)).toEqual(ok);
    expect(t.listLoads(T0)).toEqual([idle(1n, 0)]);
    expect(t.liveRequests).toBe(0);
  });

  it("makes request ids unique across every rank and worker of the tracker", () => {
    const t = tracker();
    t.register(worker(1, 0, 2), T0);
    t.register(worker(2), T0);
    t.add(req("r", 1, 1, h(1)), T0);
    const duplicate = {
      ok: false,
      code: "duplicate_request",
      message: "Request r already exists (assigned to worker WorkerWithDpRank { worker_id: 1, dp_rank: 1 })",
    };
    expect(t.add(req("r", 1, 0, h(2)), T0)).toEqual(duplicate);
    expect(t.add(req("r", 2, 0, h(2)), T0)).toEqual(duplicate);
    expect(decodeBlocks(t, T0)).toEqual([0, 1, 0]);
  });

  it("keeps worker ids above 2^53 exact in listings and error texts", () => {
    const t = tracker();
    const big = 2n ** 53n;
    t.register(worker(U64_MAX, 0, 1), T0);
    t.register(worker(big + 1n), T0);
    expect(t.register(worker(big), T0)).toMatchObject({ ok: true });
    expect(t.listWorkers(T0).map((w) => w.workerId)).toEqual([big, big + 1n, U64_MAX]);
    expect(t.add(req("r", U64_MAX, 0, h(1), 3), T0)).toEqual(ok);
    expect(t.listLoads(T0)[2]).toEqual({
      workerId: U64_MAX,
      dpRank: 0,
      activePrefillTokens: 3,
      activeDecodeBlocks: 1,
    });
    expect(t.add(req("x", U64_MAX, 1, h(1)), T0)).toMatchObject({
      message: "Worker WorkerWithDpRank { worker_id: 18446744073709551615, dp_rank: 1 } not found",
    });
    expect(t.register(worker(U64_MAX), T0)).toMatchObject({
      message: "worker 18446744073709551615 already registered for model=model tenant=default",
    });
    expect(t.unregister(big + 1n, T0)).toEqual({ ok: true, deleted: false });
    expect(t.listWorkers(T0).map((w) => w.workerId)).toEqual([big, U64_MAX]);
  });
});

describe("resource caps", () => {
  it("refuses a live request past the cap with limit_exceeded and changes nothing", () => {
    const t = tracker({ limits: { maxLiveRequests: 2 }, expiryMs: 1000 });
    t.register(worker(1), T0);
    t.add(req("a", 1, 0, h(1), 1), T0);
    t.add(req("b", 1, 0, h(2), 1), T0);
    const refused = t.add(req("c", 1, 0, h(3), 1), T0);
    expect(refused).toMatchObject({ ok: false, code: "limit_exceeded" });
    expect(refused.ok || refused.message).toMatch(/at most 2 live requests/);
    expect(t.listLoads(T0)).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 2, activeDecodeBlocks: 2 },
    ]);
    expect(t.free("c", T0)).toEqual(ok);
    expect(t.prefillComplete("c", T0)).toMatchObject({ code: "request_not_found" });
    t.free("a", T0);
    expect(t.add(req("c", 1, 0, h(3), 1), T0)).toEqual(ok);
    expect(t.add(req("d", 1, 0, h(4), 1), T0 + 1001)).toEqual(ok);
  });

  it("refuses a worker past the worker cap and a range past the rank cap, naming the cap", () => {
    const t = tracker({ limits: { maxWorkers: 2, maxRanks: 4 } });
    expect(t.register(worker(1, 0, 5), T0)).toMatchObject({ code: "limit_exceeded" });
    expect(t.exists).toBe(false);
    t.register(worker(1, 0, 3), T0);
    const ranks = t.register(worker(2, 0, 2), T0);
    expect(ranks).toMatchObject({ code: "limit_exceeded" });
    expect(ranks.ok || ranks.message).toMatch(/at most 4 data-parallel ranks/);
    t.register(worker(2, 0, 1), T0);
    const workers = t.register(worker(3), T0);
    expect(workers).toMatchObject({ code: "limit_exceeded" });
    expect(workers.ok || workers.message).toMatch(/at most 2 workers/);
    expect(t.listLoads(T0)).toHaveLength(4);
    t.unregister(1n, T0);
    expect(t.register(worker(3, 0, 3), T0)).toEqual({ ok: true, created: false });
  });

  it("refuses a prompt longer than the per-call hash cap with too_large and changes nothing", () => {
    const t = tracker();
    t.register(worker(1), T0);
    const chain = (n: number) => BigUint64Array.from({ length: n }, (_, i) => BigInt(i + 1));
    const refused = t.add(req("r", 1, 0, chain(MAX_HASHES_PER_CALL + 1), 5), T0);
    expect(refused).toMatchObject({ ok: false, code: "too_large" });
    expect(t.liveRequests).toBe(0);
    expect(t.listLoads(T0)).toEqual([idle(1n, 0)]);
    expect(t.add(req("r", 1, 0, chain(MAX_HASHES_PER_CALL), 5), T0)).toEqual(ok);
    expect(decodeBlocks(t, T0)).toEqual([MAX_HASHES_PER_CALL]);
  });
});
