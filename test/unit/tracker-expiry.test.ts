import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { decodeBlocks, h, prefillTokens, RecordingStore, req, T0, tracker, worker } from "./tracker-fixtures";

const EXPIRY_MS = 10_000;

function busyTracker(store?: RecordingStore): Tracker {
  const t = tracker({ expiryMs: EXPIRY_MS, store });
  t.register(worker(1, 0, 2), T0);
  t.add(req("old", 1, 0, h(1, 2, 3), 8), T0);
  return t;
}

describe("request expiry", () => {
  it("keeps a request live at exactly its start plus the expiry age and removes it as if freed 1 ms later", () => {
    const t = busyTracker();
    const deadline = T0 + EXPIRY_MS;
    expect(t.listLoads(deadline)[0]).toEqual({
      workerId: 1n,
      dpRank: 0,
      activePrefillTokens: 8,
      activeDecodeBlocks: 3,
    });
    expect(t.liveRequests).toBe(1);
    expect(t.listLoads(deadline + 1)[0]).toEqual({
      workerId: 1n,
      dpRank: 0,
      activePrefillTokens: 0,
      activeDecodeBlocks: 0,
    });
    expect(t.liveRequests).toBe(0);
    expect(t.request("old")).toBeUndefined();
    expect(t.prefillComplete("old", deadline + 1)).toMatchObject({ code: "request_not_found" });
    expect(t.free("old", deadline + 1)).toEqual({ ok: true });
  });

  const calls: [string, (t: Tracker, now: number) => unknown][] = [
    ["listLoads", (t, now) => t.listLoads(now)],
    ["listWorkers", (t, now) => t.listWorkers(now)],
    ["potentialLoads", (t, now) => t.potentialLoads(h(1), 0, now)],
    ["add of another request", (t, now) => t.add(req("new", 1, 1, h(9)), now)],
    ["prefillComplete of an unknown request", (t, now) => t.prefillComplete("nope", now)],
    ["free of an unknown request", (t, now) => t.free("nope", now)],
    ["register", (t, now) => t.register(worker(2), now)],
    ["a refused unregister", (t, now) => t.unregister(9n, now)],
  ];
  it.each(calls)("expires what is due lazily on %s", (_, call) => {
    const t = busyTracker();
    call(t, T0 + EXPIRY_MS + 1);
    expect(t.liveRequests).toBe(t.request("new") ? 1 : 0);
    expect(t.request("old")).toBeUndefined();
    expect(t.nextDeadline()).toBe(t.request("new") ? T0 + 2 * EXPIRY_MS + 1 : undefined);
  });

  it("lets an expired request id be added again, with a fresh deadline", () => {
    const t = busyTracker();
    const later = T0 + EXPIRY_MS + 1;
    expect(t.add(req("old", 1, 1, h(4), 2), later)).toEqual({ ok: true });
    expect(t.listLoads(later).map((l) => [l.activePrefillTokens, l.activeDecodeBlocks])).toEqual([
      [0, 0],
      [2, 1],
    ]);
    expect(t.nextDeadline()).toBe(later + EXPIRY_MS);
  });

  it("expire(now) removes every due request and returns how many", () => {
    const t = busyTracker();
    t.add(req("b", 1, 1, h(1), 1), T0 + 100);
    t.add(req("c", 1, 1, h(2), 1), T0 + 100);
    t.add(req("d", 1, 0, h(5), 1), T0 + 5_000);
    expect(t.expire(T0 + EXPIRY_MS)).toBe(0);
    expect(t.expire(T0 + EXPIRY_MS + 101)).toBe(3);
    expect(t.liveRequests).toBe(1);
    expect(t.expire(T0 + EXPIRY_MS + 101)).toBe(0);
    expect(t.expire(T0 + EXPIRY_MS + 5_001)).toBe(1);
    expect(decodeBlocks(t, T0 + EXPIRY_MS + 5_001)).toEqual([0, 0]);
  });

  it("reports the earliest live deadline, which moves as requests are freed or dropped", () => {
    const t = busyTracker();
    t.register(worker(2), T0);
    t.add(req("b", 1, 1, h(1)), T0 + 1_000);
    t.add(req("c", 2, 0, h(1)), T0 + 2_000);
    expect(t.nextDeadline()).toBe(T0 + EXPIRY_MS);
    t.free("b", T0 + 3_000);
    expect(t.nextDeadline()).toBe(T0 + EXPIRY_MS);
    t.free("old", T0 + 3_000);
    expect(t.nextDeadline()).toBe(T0 + 2_000 + EXPIRY_MS);
    t.add(req("d", 1, 0, h(1)), T0 + 4_000);
    t.unregister(2n, T0 + 4_000);
    expect(t.nextDeadline()).toBe(T0 + 4_000 + EXPIRY_MS);
    t.unregister(1n, T0 + 4_000);
    expect(t.nextDeadline()).toBeUndefined();
  });

  it("orders a restored request by its own deadline, even when it is restored after later ones", () => {
    const t = tracker({ expiryMs: EXPIRY_MS });
    t.restoreWorker(worker(1));
    t.restoreRequest(req("late", 1, 0, h(2)), T0 + 3_000, false);
    t.restoreRequest(req("early", 1, 0, h(1)), T0, false);
    t.restoreRequest(req("mid", 1, 0, h(3)), T0 + 1_000, false);
    expect(t.nextDeadline()).toBe(T0 + EXPIRY_MS);
    expect(t.expire(T0 + EXPIRY_MS + 1)).toBe(1);
    expect(t.request("early")).toBeUndefined();
    expect(t.nextDeadline()).toBe(T0 + 1_000 + EXPIRY_MS);
    expect(t.expire(T0 + 3_000 + EXPIRY_MS + 1)).toBe(2);
  });

  it("re-anchors the next prefill at the expired request's deadline, not at the later call", () => {
    const run = (sweepEarly: boolean) => {
      const t = tracker({ expiryMs: 60_000 });
      t.register(worker(1), T0);
      t.add(req("r1", 1, 0, h(1), 40, 100_000), T0);
      t.add(req("r2", 1, 0, h(2), 30, 100_000), T0 + 50_000);
      if (sweepEarly) expect(t.expire(T0 + 60_001)).toBe(1);
      return prefillTokens(t, T0 + 80_000);
    };
    // r2 anchors at r1's deadline T0+60 s; 20 s later: 30 − floor(30 × 20 / 100).
    expect(run(false)).toEqual([24]);
    expect(run(true)).toEqual([24]);
  });

  it("tells the store about each expired request, so a restart does not bring it back", () => {
    const store = new RecordingStore();
    const t = busyTracker(store);
    t.add(req("young", 1, 1, h(7), 3), T0 + 5_000);
    t.expire(T0 + EXPIRY_MS + 1);
    expect([...store.requests.keys()]).toEqual(["young"]);
    const restored = store.rebuild({ expiryMs: EXPIRY_MS });
    expect(restored.listLoads(T0 + EXPIRY_MS + 1)).toEqual(t.listLoads(T0 + EXPIRY_MS + 1));
  });

  it("clears a request 331 s after its add with the default 300 s age (seed test), but not at 300 s", () => {
    const t = tracker();
    t.register(worker(1), T0);
    t.add(req("req-1", 1, 0, h(1, 2, 3), 8), T0);
    expect(decodeBlocks(t, T0 + 300_000)).toEqual([3]);
    expect(t.listLoads(T0 + 331_000)).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 0, activeDecodeBlocks: 0 },
    ]);
  });
});
