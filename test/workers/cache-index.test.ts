/**
 * The tracker object's cache index: rebuilt from the live requests after a reset (selection
 * bookings by their public hashes, slot-tracker ones by their sequence hashes), and swept by the
 * object's one alarm.
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CacheIndex } from "../../durable-objects/core/cache-index/cache-index";
import { hashes, setClock, trackerStub, uniqueKey } from "./helpers";

const T0 = 1_800_000_000_000;
const TTL_MS = 120_000;

type Key = ReturnType<typeof uniqueKey>;

/** (worker, rank, device blocks) of the ranks holding the prompt, queried by sequence hashes. */
function cached(key: Key, sequence: BigUint64Array, now = Date.now()) {
  return runInDurableObject(trackerStub(key), (instance) => {
    const cache = (instance as unknown as { tracker: { cache: CacheIndex } }).tracker.cache;
    return cache
      .overlap({ localHashes: sequence, sequenceHashes: sequence }, now)
      .map((r) => [r.workerId, r.dpRank, r.deviceBlocks]);
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("tracker object cache index", () => {
  it("rebuilds from the live requests after a reset, losing what freed bookings had recorded", async () => {
    const key = uniqueKey("cache");
    let stub = trackerStub(key);
    await stub.register({ workerId: 3n, blockSize: 4, dpStart: 0, dpSize: 2 });
    const selection = {
      requestId: "s",
      workerId: 3n,
      dpRank: 0,
      hashes: hashes(900, 901),
      newIslTokens: 8,
      cachePrompt: { blockHashes: hashes(1, 20), sequenceHashes: hashes(1, 2) },
    };
    expect(await stub.add(selection)).toEqual({ ok: true });
    await stub.add({ requestId: "h", workerId: 3n, dpRank: 1, hashes: hashes(1, 2), newIslTokens: 8 });
    await stub.add({ requestId: "f", workerId: 3n, dpRank: 1, hashes: hashes(7, 8), newIslTokens: 8 });
    await stub.add({
      requestId: "n",
      workerId: 3n,
      dpRank: 1,
      hashes: hashes(5),
      newIslTokens: 8,
      cachePrompt: null,
    });
    await stub.free("f");
    expect(await cached(key, hashes(1, 2))).toEqual([
      [3n, 0, 2],
      [3n, 1, 2],
    ]);
    expect(await cached(key, hashes(7, 8))).toEqual([[3n, 1, 2]]);

    await abortAllDurableObjects();
    stub = trackerStub(key);
    expect((await stub.listLoads()).length).toBe(2);
    expect(await cached(key, hashes(1, 2))).toEqual([
      [3n, 0, 2],
      [3n, 1, 2],
    ]);
    expect(await cached(key, hashes(7, 8))).toEqual([]);
    expect(await cached(key, hashes(5))).toEqual([]);
    expect(await cached(key, hashes(900))).toEqual([]);
  });

  it("sweeps the index from the alarm once its entries are past due, with nothing else pending", async () => {
    const move = setClock(T0);
    const key = uniqueKey("cache-sweep");
    const stub = trackerStub(key);
    await stub.register({ workerId: 1n, blockSize: 4, dpStart: 0, dpSize: 1 });
    await stub.add({ requestId: "a", workerId: 1n, dpRank: 0, hashes: hashes(1, 2, 3), newIslTokens: 4 });
    await stub.free("a");
    const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    // The sweep waits a second past the deadline: entries past due are already left out of answers.
    expect(alarm).toBe(T0 + TTL_MS + 1_000);
    expect(await cached(key, hashes(1, 2, 3), T0 + TTL_MS - 1)).toEqual([[1n, 0, 3]]);
    move(T0 + TTL_MS + 1_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const entries = await runInDurableObject(
      stub,
      (instance) => (instance as unknown as { tracker: { cache: CacheIndex } }).tracker.cache.stats().entries,
    );
    expect(entries).toBe(0);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm())).toBeNull();
  });
});
