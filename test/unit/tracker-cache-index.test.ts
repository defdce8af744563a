import { describe, expect, it } from "vitest";
import type { PromptBlocks } from "../../durable-objects/core/cache-index/cache-index";
import type { Tracker } from "../../durable-objects/core/tracker";
import { CACHE_SWEEP_SLACK_MS } from "../../durable-objects/core/tracker-state";
import { DEFAULT_ROUTER_TTL_SECS } from "../../durable-objects/limits";
import type { AddInput } from "../../durable-objects/types";
import { Sim } from "./replication-sim";
import { h, RecordingStore, req, T0, tracker, worker } from "./tracker-fixtures";

const TTL = DEFAULT_ROUTER_TTL_SECS * 1000;

/** A query by sequence hashes alone, as `/route` makes it. */
const bySequence = (hashes: BigUint64Array): PromptBlocks => ({
  localHashes: hashes,
  sequenceHashes: hashes,
});

/** (worker, rank, device blocks) of every rank holding the prompt at `now`. */
function cached(t: Tracker, hashes: BigUint64Array, now: number): [bigint, number, number][] {
  return t.cache.overlap(bySequence(hashes), now).map((r) => [r.workerId, r.dpRank, r.deviceBlocks]);
}

/** A selection booking whose tracking hashes (keyed) are not its public sequence hashes. */
function selectionBooking(requestId: string, dpRank: number): AddInput {
  return {
    ...req(requestId, 1, dpRank, h(900, 901, 902), 12),
    cachePrompt: { blockHashes: h(1, 20, 30), sequenceHashes: h(1, 2, 3) },
  };
}

describe("the tracker's cache index", () => {
  it("records a booking on its rank from its start, keeps it after the free, drops it at the TTL", () => {
    const t = tracker();
    t.register(worker(1, 0, 2), T0);
    expect(t.add(req("a", 1, 1, h(1, 2, 3), 48), T0).ok).toBe(true);
    expect(t.free("a", T0 + 1).ok).toBe(true);
    expect(cached(t, h(1, 2, 3, 4), T0 + 2)).toEqual([[1n, 1, 3]]);
    expect(t.nextCacheSweep()).toBe(T0 + TTL + CACHE_SWEEP_SLACK_MS);
    expect(cached(t, h(1, 2, 3), T0 + TTL)).toEqual([]);
    t.listLoads(T0 + TTL);
    expect(t.cache.stats().entries).toBe(0);
    expect(t.nextCacheSweep()).toBeUndefined();
  });

  it("records a selection booking's public hashes, not its tracking hashes", () => {
    const t = tracker();
    t.register(worker(1), T0);
    expect(t.add(selectionBooking("s", 0), T0).ok).toBe(true);
    expect(cached(t, h(1, 2, 3), T0 + 1)).toEqual([[1n, 0, 3]]);
    expect(cached(t, h(900, 901, 902), T0 + 1)).toEqual([]);
    const dumped = t.cache.dump()[0]!.event.data.stored.blocks;
    expect(dumped.map((b) => b.tokens_hash)).toEqual([1n, 20n, 30n]);
  });

  it("records nothing for a booking whose cache prompt is null", () => {
    const t = tracker();
    t.register(worker(1), T0);
    expect(t.add({ ...req("n", 1, 0, h(1, 2), 8), cachePrompt: null }, T0).ok).toBe(true);
    expect(t.cache.stats().entries).toBe(0);
  });

  it("drops what a worker's ranks had cached when it unregisters, and no other worker's", () => {
    const t = tracker();
    t.register(worker(1, 0, 2), T0);
    t.register(worker(2), T0);
    t.add(req("a", 1, 0, h(5, 6), 0), T0);
    t.add(req("b", 1, 1, h(5, 6), 0), T0);
    t.add(req("c", 2, 0, h(5, 6), 0), T0);
    t.unregister(1n, T0 + 1);
    expect(cached(t, h(5, 6), T0 + 2)).toEqual([[2n, 0, 2]]);
  });

  it("comes back from the live requests after a restart, without what freed bookings recorded", () => {
    const store = new RecordingStore();
    const t = tracker({ store });
    t.register(worker(1, 0, 2), T0);
    t.add(selectionBooking("live", 0), T0);
    t.add(req("freed", 1, 1, h(7, 8), 0), T0);
    t.free("freed", T0 + 1);
    const restored = store.rebuild();
    expect(cached(restored, h(1, 2, 3), T0 + 2)).toEqual([[1n, 0, 3]]);
    expect(cached(restored, h(7, 8), T0 + 2)).toEqual([]);
    expect(restored.cache.dump()).toEqual(t.cache.dump().slice(0, 1));
  });

  it("holds the same entries at every replica, also where a free overtook its add", () => {
    const sim = new Sim({ names: ["a", "b"], expiryMs: 300_000 }, T0);
    sim.at(sim.replica("a"), (t, now) => t.register(worker(1, 0, 2), now));
    sim.settle();
    sim.at(sim.replica("a"), (t, now) => t.add(selectionBooking("s", 1), now));
    // B frees the booking before it has seen it: B never books it, but records it when it arrives.
    sim.at(sim.replica("b"), (t, now) => t.free("s", now + 5));
    sim.settle();
    const [a, b] = sim.replicas.map((r) => r.tracker);
    expect(b!.request("s")).toBeUndefined();
    expect(a!.request("s")).toBeUndefined();
    expect(cached(b!, h(1, 2, 3), sim.time + 1)).toEqual([[1n, 1, 3]]);
    expect(b!.cache.dump()).toEqual(a!.cache.dump());
  });

  it("records nothing at a replica for a booking older than its worker's unregistration", () => {
    const sim = new Sim({ names: ["a", "b"], expiryMs: 300_000 }, T0);
    sim.at(sim.replica("a"), (t, now) => t.register(worker(1), now));
    sim.settle();
    sim.at(sim.replica("a"), (t, now) => t.add(req("r", 1, 0, h(4, 5), 0), now));
    sim.time += 5;
    sim.at(sim.replica("b"), (t, now) => t.unregister(1n, now));
    sim.settle();
    for (const r of sim.replicas) expect(r.tracker.cache.stats().entries, r.name).toBe(0);
  });

  it("drops a worker's entries at every replica when it unregisters at one, and keeps the others'", () => {
    const sim = new Sim({ names: ["a", "b"], expiryMs: 300_000 }, T0);
    sim.at(sim.replica("a"), (t, now) => t.register(worker(1), now));
    sim.at(sim.replica("a"), (t, now) => t.register(worker(2), now));
    sim.settle();
    sim.at(sim.replica("a"), (t, now) => t.add(req("r1", 1, 0, h(4, 5), 0), now));
    sim.at(sim.replica("a"), (t, now) => t.add(req("r2", 2, 0, h(4, 5), 0), now));
    sim.settle();
    for (const r of sim.replicas) expect(cached(r.tracker, h(4, 5), sim.time + 1), r.name).toHaveLength(2);
    sim.time += 5;
    sim.at(sim.replica("b"), (t, now) => t.unregister(1n, now));
    sim.settle();
    for (const r of sim.replicas)
      expect(cached(r.tracker, h(4, 5), sim.time + 1), r.name).toEqual([[2n, 0, 2]]);
  });

  it("drops a catalog worker's entries at every replica when its record is removed, and a dropped rank's", () => {
    const sim = new Sim({ names: ["a", "b"], expiryMs: 300_000 }, T0);
    const upsert = (workerId: bigint, dpSize: number) => (t: Tracker, now: number) =>
      t.upsertCatalog(
        { workerId, model: t.model, tenant: t.tenant, endpoint: `http://w${workerId}`, blockSize: 4, dpSize },
        now,
      );
    sim.at(sim.replica("a"), upsert(1n, 2));
    sim.at(sim.replica("a"), upsert(2n, 1));
    sim.settle();
    sim.at(sim.replica("a"), (t, now) => t.add(req("r1", 1, 1, h(4, 5), 0), now));
    sim.at(sim.replica("a"), (t, now) => t.add(req("r2", 2, 0, h(4, 5), 0), now));
    sim.settle();
    for (const r of sim.replicas) expect(cached(r.tracker, h(4, 5), sim.time + 1), r.name).toHaveLength(2);
    // Worker 1 keeps rank 0 only: rank 1's entries go, at both replicas.
    sim.time += 5;
    sim.at(sim.replica("b"), (t, now) => t.patchCatalog(1n, { dpSize: 1 }, now));
    sim.settle();
    for (const r of sim.replicas)
      expect(cached(r.tracker, h(4, 5), sim.time + 1), r.name).toEqual([[2n, 0, 2]]);
    // Worker 2's record removed at b: its entries go at both.
    sim.at(sim.replica("b"), (t, now) => t.removeCatalog(2n, now));
    sim.settle();
    for (const r of sim.replicas) expect(cached(r.tracker, h(4, 5), sim.time + 1), r.name).toEqual([]);
  });
});
