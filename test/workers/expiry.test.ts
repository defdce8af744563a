import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CACHE_SWEEP_SLACK_MS } from "../../durable-objects/core/tracker-state";
import { DEFAULT_ROUTER_TTL_SECS } from "../../durable-objects/limits";
import { hashes, setClock, trackerStub, uniqueKey, waitFor } from "./helpers";

const EXPIRY_MS = Number(env.REQUEST_EXPIRY_SECONDS) * 1000;
const CACHE_TTL_MS = DEFAULT_ROUTER_TTL_SECS * 1000;
/** How long to wait for the real alarm: alarms may fire late on a busy machine. */
const ALARM_WAIT_MS = 30_000;

const storedRequests = (stub: ReturnType<typeof trackerStub>) =>
  runInDurableObject(
    stub,
    (_i, state) => state.storage.sql.exec("SELECT count(*) AS n FROM requests").one().n,
  );

const alarmOf = (stub: ReturnType<typeof trackerStub>) =>
  runInDurableObject(stub, (_i, state) => state.storage.getAlarm());

describe("expiry", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("is configured short for these tests", () => {
    expect(EXPIRY_MS).toBe(3000);
  });

  it("removes a request when the real alarm fires after its deadline, with no other call", async () => {
    const stub = trackerStub(uniqueKey());
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    const before = Date.now();
    await stub.add({ requestId: "old", workerId: 1n, dpRank: 0, hashes: hashes(1, 2), newIslTokens: 4 });
    const after = Date.now();
    // Read together, so that the row is seen while the alarm that removes it is still pending.
    const { alarm, rows } = await runInDurableObject(stub, async (_i, state) => ({
      alarm: await state.storage.getAlarm(),
      rows: state.storage.sql.exec("SELECT count(*) AS n FROM requests").one().n,
    }));
    expect(alarm).toBeGreaterThanOrEqual(before + EXPIRY_MS);
    expect(alarm).toBeLessThanOrEqual(after + EXPIRY_MS + 1);
    expect(rows).toBe(1);
    // Only the alarm can delete the row: nothing else calls the tracker's methods meanwhile.
    const gone = await waitFor(async () => (await storedRequests(stub)) === 0, ALARM_WAIT_MS);
    const goneAt = Date.now();
    expect(gone).toBe(true);
    expect(goneAt).toBeGreaterThan(before + EXPIRY_MS);
    expect(await stub.listLoads()).toEqual([
      { workerId: 1n, dpRank: 0, activePrefillTokens: 0, activeDecodeBlocks: 0 },
    ]);
  });

  it("re-arms the alarm for the next deadline after firing, and a second run changes nothing", async () => {
    // The clock is the test's: a day ahead, so that the real alarm never fires during the test.
    const t0 = Date.now() + 86_400_000;
    const setNow = setClock(t0);
    const stub = trackerStub(uniqueKey());
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    await stub.add({ requestId: "a", workerId: 1n, dpRank: 0, hashes: hashes(1), newIslTokens: 1 });
    setNow(t0 + 1200);
    await stub.add({ requestId: "b", workerId: 1n, dpRank: 0, hashes: hashes(2), newIslTokens: 1 });
    // Expiry is strict (`now > deadline`): the alarm is set 1 ms past the earliest deadline.
    expect(await alarmOf(stub)).toBe(t0 + EXPIRY_MS + 1);

    setNow(t0 + EXPIRY_MS + 1);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await storedRequests(stub)).toBe(1);
    expect(await alarmOf(stub)).toBe(t0 + 1200 + EXPIRY_MS + 1);
    const loads = await stub.listLoads();
    expect(loads[0]!.activeDecodeBlocks).toBe(1);
    await runInDurableObject(stub, async (instance) => {
      await instance.alarm!();
      await instance.alarm!();
    });
    expect(await stub.listLoads()).toEqual(loads);
    expect(await alarmOf(stub)).toBe(t0 + 1200 + EXPIRY_MS + 1);

    setNow(t0 + 1200 + EXPIRY_MS + 1);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await storedRequests(stub)).toBe(0);
    // What the bookings recorded in the cache index outlives them, for the index's TTL: the alarm
    // stays for its sweeps, each a little past the entries' deadline, and then goes.
    expect(await alarmOf(stub)).toBe(t0 + CACHE_TTL_MS + CACHE_SWEEP_SLACK_MS);
    setNow(t0 + CACHE_TTL_MS + CACHE_SWEEP_SLACK_MS);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await alarmOf(stub)).toBe(t0 + 1200 + CACHE_TTL_MS + CACHE_SWEEP_SLACK_MS);
    setNow(t0 + 1200 + CACHE_TTL_MS + CACHE_SWEEP_SLACK_MS);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await alarmOf(stub)).toBeNull();
  });

  it("applies expiry lazily on reads even when the alarm has not run", async () => {
    const t0 = Date.now() + 86_400_000;
    const setNow = setClock(t0);
    const stub = trackerStub(uniqueKey());
    await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 });
    await stub.add({ requestId: "a", workerId: 1n, dpRank: 0, hashes: hashes(1), newIslTokens: 1 });
    await runInDurableObject(stub, (_i, state) => state.storage.deleteAlarm());
    setNow(t0 + EXPIRY_MS + 100);
    expect(await storedRequests(stub)).toBe(1);
    expect((await stub.listLoads())[0]!.activeDecodeBlocks).toBe(0);
    expect(await storedRequests(stub)).toBe(0);
  });
});
