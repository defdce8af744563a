import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { h, prefillTokens, RecordingStore, req, T0, tracker, worker } from "./tracker-fixtures";

const S = 1_000;

/** One rank, its prefills added at T0 + the given offset, in order: [id, tokens, durationMs?, addedAt]. */
function rank(...prefills: [string, number, number | undefined, number][]): Tracker {
  const t = tracker({ expiryMs: 3_600 * S });
  t.register(worker(1), T0);
  for (const [id, tokens, duration, at] of prefills) {
    expect(t.add(req(id, 1, 0, h(id.length), tokens, duration), T0 + at)).toEqual({ ok: true });
  }
  return t;
}

/** The rank's prefill load at T0 + `at`. */
function load(t: Tracker, at: number): number {
  return prefillTokens(t, T0 + at)[0]!;
}

describe("prefill decay with every prefill modelled", () => {
  it("decays 100 tokens over 10 s linearly: 50 at 5 s, none from 10 s", () => {
    const t = rank(["r", 100, 10 * S, 0]);
    expect(load(t, 0)).toBe(100);
    expect(load(t, 5 * S)).toBe(50);
    expect(load(t, 9_999)).toBe(1);
    expect(load(t, 10 * S)).toBe(0);
    expect(load(t, 15 * S)).toBe(0);
  });

  it("anchors the next prefill when the anchor leaves: 30 tok/100 s is 24 twenty seconds later", () => {
    for (const leave of ["free", "prefillComplete"] as const) {
      const t = rank(["r1", 40, 100 * S, 0], ["r2", 30, 100 * S, 1 * S]);
      expect(load(t, 50 * S)).toBe(70 - 20);
      t[leave]("r1", T0 + 50 * S);
      expect(load(t, 50 * S)).toBe(30);
      expect(load(t, 70 * S)).toBe(30 - Math.floor((30 * 20) / 100));
      expect(load(t, 70 * S)).toBe(24);
    }
  });

  it("spills the anchor's overrun into the prefills behind it instead of clamping at the anchor", () => {
    const t = rank(["r1", 100, 10 * S, 0], ["r2", 40, 10 * S, 0]);
    expect(load(t, 12 * S)).toBe(140 - 120);
    expect(load(t, 14 * S)).toBe(0);
    expect(load(t, 30 * S)).toBe(0);
  });

  it("completes a zero-duration anchor at once while the prefills behind it wait for their turn", () => {
    const t = rank(["r1", 100, 0, 0], ["r2", 40, 10 * S, 0]);
    expect(load(t, 0)).toBe(40);
    expect(load(t, 5 * S)).toBe(40);
    t.prefillComplete("r1", T0 + 6 * S);
    expect(load(t, 11 * S)).toBe(20);
  });

  it("keeps the anchor when a prefill behind it completes", () => {
    const t = rank(["r1", 100, 10 * S, 0], ["r2", 40, 10 * S, 0], ["r3", 60, 10 * S, 0]);
    t.prefillComplete("r2", T0 + 5 * S);
    expect(load(t, 5 * S)).toBe(160 - 50);
    expect(load(t, 8 * S)).toBe(160 - 80);
    t.free("r1", T0 + 8 * S);
    expect(load(t, 13 * S)).toBe(60 - 30);
  });

  it("anchors a prefill that arrives at an empty queue at its own add time", () => {
    const t = rank(["r1", 100, 10 * S, 0]);
    t.prefillComplete("r1", T0 + 1 * S);
    t.add(req("r2", 1, 0, h(2), 50, 10 * S), T0 + 20 * S);
    expect(load(t, 25 * S)).toBe(25);
  });
});

describe("prefill decay with an unmodelled prefill queued (anchor-only)", () => {
  it("decays only the anchor and clamps it at zero, so nothing spills over", () => {
    const t = rank(["r1", 100, 10 * S, 0], ["r2", 50, undefined, 0]);
    expect(load(t, 5 * S)).toBe(50 + 50);
    expect(load(t, 15 * S)).toBe(50);
  });

  it("rounds the anchor's remaining tokens up", () => {
    const t = rank(["r1", 10, 3 * S, 0], ["r2", 5, undefined, 0]);
    expect(load(t, 2 * S)).toBe(5 + Math.ceil(10 / 3));
    expect(load(t, 1 * S)).toBe(5 + 7);
  });

  it("does not decay an anchor without a duration, even with decaying prefills behind it", () => {
    const t = rank(["r1", 50, undefined, 0], ["r2", 100, 10 * S, 0]);
    expect(load(t, 5 * S)).toBe(150);
    expect(load(t, 60 * S)).toBe(150);
    t.prefillComplete("r1", T0 + 20 * S);
    expect(load(t, 25 * S)).toBe(50);
  });

  it("counts a zero-duration anchor as done and the rest in full", () => {
    const t = rank(["r1", 100, 0, 0], ["r2", 50, undefined, 0]);
    expect(load(t, 0)).toBe(50);
  });
});

describe("prefill without durations (the Dynamo-compatible path)", () => {
  it("reports the plain sum of pending tokens at any time, and only prefills with tokens count", () => {
    const t = rank(["r1", 100, undefined, 0], ["r2", 50, undefined, 0], ["r3", 0, undefined, 0]);
    expect(load(t, 0)).toBe(150);
    expect(load(t, 3_000 * S)).toBe(150);
    t.prefillComplete("r1", T0 + 10 * S);
    expect(load(t, 10 * S)).toBe(50);
    t.prefillComplete("r3", T0 + 10 * S);
    t.free("r2", T0 + 11 * S);
    expect(load(t, 11 * S)).toBe(0);
  });

  it("decays each rank's queue on its own", () => {
    const t = tracker();
    t.register(worker(1, 0, 2), T0);
    t.add(req("a", 1, 0, h(1), 100, 10 * S), T0);
    t.add(req("b", 1, 1, h(1), 100, 20 * S), T0 + 5 * S);
    expect(prefillTokens(t, T0 + 10 * S)).toEqual([0, 75]);
  });
});

describe("prefill state after a restart", () => {
  /** A tracker and its recording store, through re-anchors, completions, frees and an expiry. */
  function history(): { t: Tracker; store: RecordingStore } {
    const store = new RecordingStore();
    const t = tracker({ expiryMs: 120 * S, store });
    t.register(worker(1, 0, 2), T0);
    t.register(worker(2), T0);
    const add = (id: string, w: number, r: number, tokens: number, dur: number | undefined, at: number) =>
      expect(t.add(req(id, w, r, h(1, id.length), tokens, dur), T0 + at)).toEqual({ ok: true });
    add("a1", 1, 0, 40, 100 * S, 0);
    add("a2", 1, 0, 30, 200 * S, 1 * S);
    add("a3", 1, 0, 20, 50 * S, 2 * S);
    add("b1", 1, 1, 60, undefined, 0);
    add("b2", 1, 1, 80, 40 * S, 3 * S);
    add("c1", 2, 0, 100, 10 * S, 0);
    add("c2", 2, 0, 10, undefined, 90 * S);
    t.free("a1", T0 + 10 * S);
    t.prefillComplete("b1", T0 + 20 * S);
    t.prefillComplete("a3", T0 + 25 * S);
    t.free("c1", T0 + 95 * S);
    add("c3", 2, 0, 70, 30 * S, 100 * S);
    return { t, store };
  }

  it("rebuilds from the store's rows to the same loads now and as decay and expiry go on", () => {
    const { t, store } = history();
    const restored = store.rebuild({ expiryMs: 120 * S });
    for (const at of [100, 101, 110, 121, 130, 150, 200, 215, 230].map((s) => T0 + s * S)) {
      expect(restored.listLoads(at), `at ${at - T0} ms`).toEqual(t.listLoads(at));
      expect(restored.potentialLoads(h(1, 2), 3, at)).toEqual(t.potentialLoads(h(1, 2), 3, at));
    }
    expect(restored.liveRequests).toBe(0);
  });

  it("restores a moved anchor at the time it moved, not at the request's add", () => {
    const store = new RecordingStore();
    const t = tracker({ store });
    t.register(worker(1), T0);
    t.add(req("r1", 1, 0, h(1), 40, 100 * S), T0);
    t.add(req("r2", 1, 0, h(2), 30, 100 * S), T0 + 1 * S);
    t.free("r1", T0 + 10 * S);
    expect(store.requests.get("r2")?.anchorAt).toBe(T0 + 10 * S);
    const restored = store.rebuild();
    expect(prefillTokens(restored, T0 + 30 * S)).toEqual([30 - Math.floor((30 * 20) / 100)]);
    expect(prefillTokens(t, T0 + 30 * S)).toEqual([24]);
  });

  it("restores a completed prefill as blocks without tokens", () => {
    const store = new RecordingStore();
    const t = tracker({ store });
    t.register(worker(1), T0);
    t.add(req("r1", 1, 0, h(1, 2), 40), T0);
    t.add(req("r2", 1, 0, h(1, 3), 30), T0);
    t.prefillComplete("r1", T0);
    expect(store.rebuild().listLoads(T0)).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 30, activeDecodeBlocks: 3 },
    ]);
  });

  it("forgets a worker's rows when it leaves and every row when the tracker is deleted", () => {
    const { t, store } = history();
    t.unregister(1n, T0 + 100 * S);
    expect([...store.requests.keys()].sort()).toEqual(["c2", "c3"]);
    expect([...store.workers.keys()]).toEqual([2n]);
    expect(store.rebuild({ expiryMs: 120 * S }).listLoads(T0 + 101 * S)).toEqual(t.listLoads(T0 + 101 * S));
    t.unregister(2n, T0 + 100 * S);
    expect(store.requests.size + store.workers.size).toBe(0);
  });
});
