import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashes, trackerStub, uniqueKey, waitFor } from "./helpers";

const EXPIRY_MS = Number(env.REQUEST_EXPIRY_SECONDS) * 1000;

const storedRequests = (stub: ReturnType<typeof trackerStub>) =>
  runInDurableObject(
    stub,
    (_i, state) => state.storage.sql.exec("SELECT count(*) AS n FROM requests").one().n,
  );

describe("expiry", () => {
  it("is configured short for these tests", () => {
    expect(EXPIRY_MS).toBe(3000);
  });

  it("removes a request when the real alarm fires, within a second of its deadline, with no other call", async () => {
    const stub = trackerStub(uniqueKey());
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    const before = Date.now();
    await stub.add({ requestId: "old", workerId: 1n, dpRank: 0, hashes: hashes(1, 2), newIslTokens: 4 });
    const after = Date.now();
    const alarm = await runInDurableObject(stub, (_i, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(before + EXPIRY_MS);
    expect(alarm).toBeLessThanOrEqual(after + EXPIRY_MS + 1);
    expect(await storedRequests(stub)).toBe(1);
    // Only the alarm can delete the row: nothing else calls the tracker's methods meanwhile.
    const gone = await waitFor(async () => (await storedRequests(stub)) === 0, EXPIRY_MS + 3000);
    const goneAt = Date.now();
    expect(gone).toBe(true);
    expect(goneAt).toBeGreaterThan(before + EXPIRY_MS);
    expect(goneAt).toBeLessThan(after + EXPIRY_MS + 1000);
    expect(await stub.listLoads()).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 0, activeDecodeBlocks: 0 },
    ]);
  });

  it("re-arms the alarm for the next deadline after firing, and a second run changes nothing", async () => {
    const stub = trackerStub(uniqueKey());
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    await stub.add({ requestId: "a", workerId: 1n, dpRank: 0, hashes: hashes(1), newIslTokens: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await stub.add({ requestId: "b", workerId: 1n, dpRank: 0, hashes: hashes(2), newIslTokens: 1 });
    expect(await waitFor(async () => (await storedRequests(stub)) === 1, EXPIRY_MS + 2000)).toBe(true);
    const next = await runInDurableObject(stub, (_i, state) => state.storage.getAlarm());
    expect(next).not.toBeNull();
    const loads = await stub.listLoads();
    expect(loads[0]!.activeDecodeBlocks).toBe(1);
    await runInDurableObject(stub, async (instance) => {
      await instance.alarm!();
      await instance.alarm!();
    });
    expect(await stub.listLoads()).toEqual(loads);
    expect(await waitFor(async () => (await storedRequests(stub)) === 0, EXPIRY_MS + 2000)).toBe(true);
  });

  it("applies expiry lazily on reads even when the alarm has not run", async () => {
    const stub = trackerStub(uniqueKey());
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    await stub.add({ requestId: "a", workerId: 1n, dpRank: 0, hashes: hashes(1), newIslTokens: 1 });
    await runInDurableObject(stub, (_i, state) => state.storage.deleteAlarm());
    await new Promise((resolve) => setTimeout(resolve, EXPIRY_MS + 100));
    expect(await storedRequests(stub)).toBe(1);
    expect((await stub.listLoads())[0]!.activeDecodeBlocks).toBe(0);
    expect(await storedRequests(stub)).toBe(0);
  });
});
