import { describe, expect, it } from "vitest";
import { MAX_LIVE_BLOCKS } from "../../durable-objects/limits";
import { h, RecordingStore, req, T0, tracker, worker } from "./tracker-fixtures";
import { trackerLimitsOf } from "../../durable-objects/env-limits";

const ok = { ok: true };
const chain = (from: number, n: number) => BigUint64Array.from({ length: n }, (_, i) => BigInt(from + i));

describe("the live block budget", () => {
  it("refuses an add that would take the tracker past its block budget, naming the cap, and changes nothing", () => {
    const store = new RecordingStore();
    const t = tracker({ limits: { maxLiveBlocks: 10 }, store });
    t.register(worker(1), T0);
    expect(t.add(req("a", 1, 0, chain(1, 6), 3), T0)).toEqual(ok);
    expect(t.add(req("b", 1, 0, chain(100, 4), 2), T0)).toEqual(ok);
    const stored = [...store.requests.keys()];
    const before = t.listLoads(T0);
    const refused = t.add(req("c", 1, 0, h(7), 1), T0);
    expect(refused).toMatchObject({ ok: false, code: "limit_exceeded" });
    expect(refused.ok || refused.message).toBe(
      "live block budget reached: live requests may hold at most 10 prompt blocks per tracker (10 held, this request has 1)",
    );
    expect(t.listLoads(T0)).toEqual(before);
    expect(t.liveRequests).toBe(2);
    expect([...store.requests.keys()]).toEqual(stored);
    // An empty prompt holds nothing and still fits.
    expect(t.add(req("empty", 1, 0, h(), 1), T0)).toEqual(ok);
  });

  it("counts a shared prefix once per request and gives the blocks back on free, expiry and unregister", () => {
    const t = tracker({ limits: { maxLiveBlocks: 8 }, expiryMs: 1_000 });
    t.register(worker(1), T0);
    t.register(worker(2), T0);
    t.add(req("a", 1, 0, h(1, 2, 3, 4), 0), T0);
    t.add(req("b", 1, 0, h(1, 2, 3, 4), 0), T0);
    expect(t.book.liveBlocks).toBe(8);
    expect(t.add(req("c", 2, 0, h(1), 0), T0)).toMatchObject({ code: "limit_exceeded" });
    t.free("a", T0);
    expect(t.book.liveBlocks).toBe(4);
    expect(t.add(req("c", 2, 0, h(1, 2, 3, 4), 0), T0 + 500)).toEqual(ok);
    // "b" expires at T0 + 1000; "c" leaves with its worker.
    expect(t.listLoads(T0 + 1_001)).toHaveLength(2);
    expect(t.book.liveBlocks).toBe(4);
    t.unregister(2n, T0 + 1_001);
    expect(t.book.liveBlocks).toBe(0);
    t.unregister(1n, T0 + 1_001);
    expect(t.book.liveBlocks).toBe(0);
  });

  it("is restored with the live requests when a tracker is rebuilt", () => {
    const t = tracker();
    t.register(worker(1), T0);
    t.restoreRequest(
      { requestId: "a", workerId: 1n, dpRank: 0, hashes: chain(1, 5), newIslTokens: 0 },
      T0,
      false,
    );
    t.restoreRequest(
      { requestId: "b", workerId: 1n, dpRank: 0, hashes: chain(1, 3), newIslTokens: 0 },
      T0,
      false,
    );
    expect(t.book.liveBlocks).toBe(8);
  });

  it("defaults to MAX_LIVE_BLOCKS and takes positive integers from the environment only", () => {
    expect(MAX_LIVE_BLOCKS).toBe(1_500_000);
    expect(trackerLimitsOf({})).toEqual({});
    expect(trackerLimitsOf({ MAX_LIVE_REQUESTS: "50", MAX_LIVE_BLOCKS: " 1000 " })).toEqual({
      maxLiveRequests: 50,
      maxLiveBlocks: 1000,
    });
    for (const bad of ["", "0", "-5", "1.5", "1e6", "ten", "99999999999999999999"]) {
      expect(trackerLimitsOf({ MAX_LIVE_REQUESTS: bad, MAX_LIVE_BLOCKS: bad })).toEqual({});
    }
  });
});
