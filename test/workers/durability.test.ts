import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashes, trackerStub, uniqueKey } from "./helpers";

describe("tracker durability", () => {
  it("brings back workers, live requests, prefill state and loads after the object is reset", async () => {
    const key = uniqueKey();
    const big = 2n ** 64n - 2n;
    let stub = trackerStub(key);
    expect(await stub.register({ workerId: big, blockSize: 16, dpStart: 0, dpSize: 2 })).toEqual({
      ok: true,
      created: true,
    });
    expect((await stub.register({ workerId: 7n, blockSize: 16, dpStart: 3, dpSize: 1 })).ok).toBe(true);
    await stub.add({ requestId: "a", workerId: big, dpRank: 1, hashes: hashes(1, 2, 3), newIslTokens: 8 });
    await stub.add({ requestId: "b", workerId: big, dpRank: 1, hashes: hashes(1, 2, -1), newIslTokens: 5 });
    await stub.add({ requestId: "c", workerId: 7n, dpRank: 3, hashes: hashes(9), newIslTokens: 4 });
    await stub.prefillComplete("b");
    const workersBefore = await stub.listWorkers();
    const loadsBefore = await stub.listLoads();
    const potentialBefore = await stub.potentialLoads(hashes(1, 2, -1, 4), 3);

    await abortAllDurableObjects();
    stub = trackerStub(key);

    expect(await stub.listWorkers()).toEqual(workersBefore);
    expect(await stub.listLoads()).toEqual(loadsBefore);
    expect(await stub.potentialLoads(hashes(1, 2, -1, 4), 3)).toEqual(potentialBefore);
    expect(loadsBefore).toEqual([
      { workerId: 7n, dpRank: 3, activePrefillTokens: 4, activeDecodeBlocks: 1 },
      { workerId: big, dpRank: 0, activePrefillTokens: 0, activeDecodeBlocks: 0 },
      { workerId: big, dpRank: 1, activePrefillTokens: 8, activeDecodeBlocks: 4 },
    ]);
    // The restored request ids are live: a duplicate add is refused, a repeat prefill_complete is fine.
    const duplicate = await stub.add({
      requestId: "a",
      workerId: 7n,
      dpRank: 3,
      hashes: hashes(),
      newIslTokens: 0,
    });
    expect(duplicate).toMatchObject({ ok: false, code: "duplicate_request" });
    expect(await stub.prefillComplete("a")).toEqual({ ok: true });
    expect((await stub.listLoads())[2]!.activePrefillTokens).toBe(0);
  });

  it("keeps a decaying prefill's anchor across a reset", async () => {
    const key = uniqueKey();
    let stub = trackerStub(key);
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    const long = 2_000;
    await stub.add({
      requestId: "a",
      workerId: 1n,
      dpRank: 0,
      hashes: hashes(1),
      newIslTokens: 100,
      expectedPrefillDurationMs: long,
    });
    await stub.add({
      requestId: "b",
      workerId: 1n,
      dpRank: 0,
      hashes: hashes(2),
      newIslTokens: 100,
      expectedPrefillDurationMs: long,
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await stub.free("a");
    const anchorBefore = await runInDurableObject(
      stub,
      (_instance, state) =>
        state.storage.sql.exec("SELECT anchor_at FROM requests WHERE request_id = 'b'").one().anchor_at,
    );
    expect(typeof anchorBefore).toBe("number");

    await abortAllDurableObjects();
    stub = trackerStub(key);
    const restoredAnchor = await runInDurableObject(stub, (instance) => {
      // The restored queue's anchor time is what decay is measured from.
      const tracker = (
        instance as unknown as { tracker: { listLoads(now: number): { activePrefillTokens: number }[] } }
      ).tracker;
      return tracker.listLoads((anchorBefore as number) + long / 2)[0]!.activePrefillTokens;
    });
    expect(restoredAnchor).toBe(50);
  });

  it("creates no storage for a tracker that is only read, and deletes all of it with the last worker", async () => {
    const key = uniqueKey();
    const stub = trackerStub(key);
    expect(await stub.listLoads()).toEqual([]);
    const tablesOf = () =>
      runInDurableObject(
        stub,
        (_i, state) =>
          state.storage.sql
            .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'")
            .toArray().length,
      );
    expect(await tablesOf()).toBe(0);
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    await stub.add({ requestId: "a", workerId: 1n, dpRank: 0, hashes: hashes(1), newIslTokens: 1 });
    expect(await tablesOf()).toBeGreaterThan(0);
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).not.toBeNull();
    expect(await stub.unregister(1n)).toEqual({ ok: true, deleted: true });
    expect(await tablesOf()).toBe(0);
    expect(await runInDurableObject(stub, (_i, state) => state.storage.getAlarm())).toBeNull();
    await abortAllDurableObjects();
    expect(await trackerStub(key).listWorkers()).toEqual([]);
  });

  it("writes one SQLite row per add", async () => {
    const key = uniqueKey();
    const stub = trackerStub(key);
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    const before = await stub.rowsWritten();
    for (let i = 0; i < 10; i++) {
      await stub.add({
        requestId: `r${i}`,
        workerId: 1n,
        dpRank: 0,
        hashes: hashes(1, 2, i),
        newIslTokens: 3,
      });
    }
    expect((await stub.rowsWritten()) - before).toBe(10);
  });
});
