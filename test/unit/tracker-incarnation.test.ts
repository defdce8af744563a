import { describe, expect, it } from "vitest";
import type { ReplicaEvent } from "../../durable-objects/core/replica/events";
import type { Tracker } from "../../durable-objects/core/tracker";
import { NULL_STORE } from "../../durable-objects/core/store";
import type { RegisterInput } from "../../durable-objects/types";
import { observe } from "./replication-scenario";
import { Sim } from "./replication-sim";
import { h, req, T0, tracker, worker } from "./tracker-fixtures";

const incarnation = (input: RegisterInput, value: bigint | undefined): RegisterInput =>
  value === undefined ? input : { ...input, incarnation: value };

const DUPLICATE = {
  ok: false,
  code: "duplicate_worker",
  message: "worker 1 already registered for model=model tenant=default",
};

describe("worker incarnations", () => {
  it("replaces a worker registered with a lower incarnation in one step: its bookings go, its new range is in", () => {
    const t = tracker();
    t.register(incarnation(worker(1, 0, 2), 4n), T0);
    t.register(worker(2, 0, 1), T0);
    expect(t.add(req("a", 1, 1, h(1, 2, 3), 40), T0).ok).toBe(true);
    expect(t.add(req("b", 2, 0, h(9), 5), T0).ok).toBe(true);

    expect(t.register(incarnation(worker(1, 4, 3), 5n), T0 + 1)).toEqual({ ok: true, created: false });
    expect(t.listWorkers(T0 + 1)).toEqual([
      { workerId: 1n, blockSize: 16, dpStart: 4, dpSize: 3, incarnation: 5n },
      { workerId: 2n, blockSize: 16, dpStart: 0, dpSize: 1 },
    ]);
    expect(t.listLoads(T0 + 1).map((l) => [l.workerId, l.dpRank, l.activePrefillTokens])).toEqual([
      [1n, 4, 0],
      [1n, 5, 0],
      [1n, 6, 0],
      [2n, 0, 5],
    ]);
    // The stale booking is gone (its id is free again); the other worker's is untouched.
    expect(t.liveRequests).toBe(1);
    expect(t.add(req("a", 1, 6, h(1), 1), T0 + 2).ok).toBe(true);
  });

  it("counts a worker that never gave an incarnation as incarnation 0", () => {
    const t = tracker();
    t.register(worker(1), T0);
    t.add(req("a", 1, 0, h(1), 8), T0);
    expect(t.register(incarnation(worker(1), 1n), T0 + 1)).toEqual({ ok: true, created: false });
    expect(t.liveRequests).toBe(0);
  });

  it("replaces the tracker's only worker without deleting the tracker's other state", () => {
    const t = tracker();
    t.register(worker(1, 0, 1), T0);
    t.add(req("a", 1, 0, h(1), 8), T0);
    expect(t.register(incarnation(worker(1, 0, 2), 2n), T0 + 1)).toEqual({ ok: true, created: false });
    expect(t.exists).toBe(true);
    expect(t.listWorkers(T0 + 1)).toEqual([
      { workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 2, incarnation: 2n },
    ]);
    expect(t.liveRequests).toBe(0);
  });

  for (const [held, given] of [
    [3n, 3n],
    [3n, 2n],
    [3n, undefined],
    [undefined, undefined],
    [undefined, 0n],
  ] as const) {
    it(`keeps today's duplicate for incarnation ${given} over ${held}, and changes nothing`, () => {
      const t = tracker();
      t.register(incarnation(worker(1, 2, 2), held), T0);
      t.add(req("a", 1, 2, h(1), 8), T0);
      const before = observe(t, T0 + 1);
      expect(t.register(incarnation(worker(1, 0, 1), given), T0 + 1)).toEqual(DUPLICATE);
      expect(observe(t, T0 + 1)).toEqual(before);
    });
  }

  it("holds a replacement to the tracker's block size and rank cap, counting the replaced ranks out", () => {
    const t = tracker({ limits: { maxRanks: 3 } });
    t.register(worker(1, 0, 2), T0);
    t.register(worker(2, 0, 1), T0);
    t.add(req("a", 1, 0, h(1), 8), T0);
    expect(t.register(incarnation(worker(1, 0, 2, 32), 1n), T0)).toMatchObject({
      code: "block_size_mismatch",
    });
    expect(t.register(incarnation(worker(1, 0, 3), 1n), T0)).toMatchObject({ code: "limit_exceeded" });
    expect(t.liveRequests).toBe(1);
    expect(t.register(incarnation(worker(1, 5, 2), 1n), T0)).toEqual({ ok: true, created: false });
    expect(t.liveRequests).toBe(0);
  });

  it("ships the replacement as one register event carrying the incarnation", () => {
    const emitted: ReplicaEvent[] = [];
    const t = tracker({ replicated: true, store: { ...NULL_STORE, emitted: (e) => emitted.push(e) } });
    t.register(worker(1), T0);
    t.add(req("a", 1, 0, h(1), 8), T0);
    emitted.length = 0;
    t.register(incarnation(worker(1, 1, 1), 7n), T0 + 1);
    expect(emitted).toEqual([
      expect.objectContaining({ type: "register", workerId: 1n, dpStart: 1, dpSize: 1, incarnation: 7n }),
    ]);
  });
});

describe("worker incarnations between replicas", () => {
  const EXPIRY_MS = 30_000;
  const at = <T>(sim: Sim, name: string, fn: (t: Tracker, now: number) => T): T =>
    sim.at(sim.replica(name), fn);
  const converged = (sim: Sim) => {
    sim.settle();
    const [first, ...rest] = sim.replicas.map((r) => observe(r.tracker, sim.time + 1));
    for (const seen of rest) expect(seen).toEqual(first);
    return first!;
  };

  it("drops at a peer exactly the bookings the replacement dropped at its origin, and a late copy of one too", () => {
    const sim = new Sim({ names: ["a", "b"], expiryMs: EXPIRY_MS }, T0);
    at(sim, "a", (t, now) => t.register(worker(1, 0, 2), now));
    converged(sim);
    at(sim, "a", (t, now) => t.add(req("old-a", 1, 0, h(1, 2), 30), now));
    at(sim, "b", (t, now) => t.add(req("old-b", 1, 1, h(3), 20), now));
    converged(sim);
    // a replaces the worker before b's next booking reaches it: b booked under the old life, but
    // after the replacement in key order, so that booking is the new life's.
    sim.time += 5;
    expect(at(sim, "a", (t, now) => t.register(incarnation(worker(1, 0, 2), 1n), now)).ok).toBe(true);
    sim.time += 5;
    at(sim, "b", (t, now) => t.add(req("new-b", 1, 1, h(4), 7), now));
    const seen = converged(sim);
    expect(seen.workers).toEqual([{ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 2, incarnation: 1n }]);
    expect(seen.live).toBe(1);
    expect(seen.loads.map((l) => l.activePrefillTokens)).toEqual([0, 7]);
  });

  it("keeps no booking alive at a peer that reached it only by a snapshot of the new life", () => {
    const sim = new Sim({ names: ["a", "b"], expiryMs: EXPIRY_MS, maxBacklog: 2 }, T0);
    at(sim, "a", (t, now) => t.register(worker(1), now));
    converged(sim);
    sim.partition(new Set(["a"]));
    at(sim, "b", (t, now) => t.add(req("stale", 1, 0, h(1), 9), now));
    at(sim, "a", (t, now) => t.add(req("x", 1, 0, h(2), 1), now));
    sim.time += 10;
    at(sim, "a", (t, now) => t.register(incarnation(worker(1), 2n), now));
    for (let i = 0; i < 4; i++) at(sim, "a", (t, now) => t.free(`f${i}`, now));
    sim.partition(new Set());
    const seen = converged(sim);
    expect(sim.stats.snapshotPages).toBeGreaterThan(0);
    expect(seen.live).toBe(0);
    expect(seen.workers[0]).toMatchObject({ incarnation: 2n });
  });
});
