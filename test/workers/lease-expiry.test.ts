/**
 * A lease's lapse with the real alarm (SPEC §8): the alarm is armed at the lease's deadline, and at
 * that moment it frees the owner's bookings with no other call, storage rows included; a renewal
 * keeps them through the alarm armed for the earlier deadline. The lease and the bookings are made
 * inside one call to the object, so that the shortest ttl (1 s) cannot pass before they are read
 * back, however slow the machine; the wait for the alarm itself is a generous poll.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TrackerObject } from "../../durable-objects/tracker-object";
import { hashes, trackerStub, uniqueKey, waitFor } from "./helpers";
import { parsePrometheus, sampleValue, select } from "./prometheus-text";
import { send } from "./reliability-http";

/** How long to wait for the real alarm: alarms may fire late on a busy machine. */
const ALARM_WAIT_MS = 30_000;
const OWNER = "fe-1";

type Stub = ReturnType<typeof trackerStub>;

/** Stored rows and the alarm, read from storage alone: no tracker method runs (none expires lazily). */
const stored = (stub: Stub) =>
  runInDurableObject(stub, async (_i, state) => ({
    alarm: await state.storage.getAlarm(),
    requests: state.storage.sql.exec("SELECT request_id, owner FROM requests ORDER BY seq").toArray(),
  }));

async function getJson(path: string, model: string): Promise<unknown> {
  const answer = await send("GET", `${path}?${new URLSearchParams({ model_name: model })}`);
  expect(answer.status, answer.text).toBe(200);
  return JSON.parse(answer.text);
}

async function scrape(model: string) {
  const answer = await send("GET", `/metrics?${new URLSearchParams({ model_name: model })}`);
  expect(answer.status).toBe(200);
  return parsePrometheus(answer.text);
}

/** A tracker with worker 1 (ranks 0 and 1). */
async function tracker() {
  const key = uniqueKey("lease-expiry");
  const stub = trackerStub(key);
  expect(await stub.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 2 })).toMatchObject({
    ok: true,
  });
  return { model: key.model, stub };
}

const owned = (requestId: string, dpRank: number) => ({
  requestId,
  workerId: 1n,
  dpRank,
  hashes: hashes(1, 2, 3 + dpRank),
  newIslTokens: 16,
  owner: OWNER,
});

describe("lease lapse with the real alarm", () => {
  it("frees a lapsed owner's bookings at the deadline with no other call, and counts them", async () => {
    const { model, stub } = await tracker();
    const idle = await getJson("/loads", model);
    // The lease, two owned bookings and the reads in one call through the object's own methods
    // (what `POST /leases` and `/add` call), so that the 1 s cannot pass in between.
    const made = await runInDurableObject(stub, async (object, state) => {
      const instance = object as unknown as TrackerObject;
      const lease = await instance.renewLease(OWNER, 1_000);
      const adds = [await instance.add(owned("a", 0)), await instance.add(owned("b", 1))];
      return {
        lease,
        adds,
        alarm: await state.storage.getAlarm(),
        rows: state.storage.sql.exec("SELECT count(*) AS n FROM requests WHERE owner = ?", OWNER).one().n,
      };
    });
    expect(made.lease).toMatchObject({ ok: true, owner: OWNER });
    expect(made.adds).toEqual([{ ok: true }, { ok: true }]);
    expect(made.rows).toBe(2);
    const deadline = (made.lease as { expiresAtMs: number }).expiresAtMs;
    // A lease lapses once the clock reaches its deadline: the alarm is armed at that moment (a
    // request's, which expires once the clock passes its deadline, 1 ms after it).
    expect(made.alarm).toBe(deadline);

    // Only the alarm can free them: nothing calls the tracker's methods until they are gone.
    const gone = await waitFor(async () => (await stored(stub)).requests.length === 0, ALARM_WAIT_MS);
    const goneAt = Date.now();
    expect(gone).toBe(true);
    expect(goneAt).toBeGreaterThanOrEqual(deadline);

    expect(await getJson("/loads", model)).toEqual(idle);
    expect(await getJson("/leases", model)).toEqual([]);
    const parsed = await scrape(model);
    expect(sampleValue(parsed, "slot_tracker_lease_freed_bookings_total", { model })).toBe(2);
    // Freed by the lapse, not by age (REQUEST_EXPIRY_SECONDS is 3 here).
    expect(sampleValue(parsed, "slot_tracker_expired_requests_total", { model })).toBe(0);
    expect(sampleValue(parsed, "slot_tracker_live_leases", { model })).toBe(0);
    expect(select(parsed, "slot_tracker_owned_bookings", { model })).toEqual([]);
  });

  it("keeps a renewed owner's bookings through the alarm armed for the first deadline", async () => {
    const { model, stub } = await tracker();
    const made = await runInDurableObject(stub, async (object, state) => {
      const instance = object as unknown as TrackerObject;
      const first = await instance.renewLease(OWNER, 1_000);
      expect(await instance.add(owned("a", 0))).toEqual({ ok: true });
      // Renewed at once for the longest ttl; the alarm is only moved earlier, so it stays armed at
      // the first deadline and must find nothing due there.
      const renewed = await instance.renewLease(OWNER, 600_000);
      return { first, renewed, alarm: await state.storage.getAlarm() };
    });
    const first = (made.first as { expiresAtMs: number }).expiresAtMs;
    const renewed = (made.renewed as { expiresAtMs: number }).expiresAtMs;
    expect(renewed).toBeGreaterThan(first);
    expect(made.alarm).toBe(first);

    // The alarm has run once it is armed elsewhere (it re-arms after firing).
    expect(await waitFor(async () => (await stored(stub)).alarm !== first, ALARM_WAIT_MS)).toBe(true);
    const after = await stored(stub);
    expect(after.requests).toEqual([{ request_id: "a", owner: OWNER }]);
    expect(await getJson("/leases", model)).toEqual([{ owner: OWNER, expires_at_ms: renewed, bookings: 1 }]);
    const parsed = await scrape(model);
    expect(sampleValue(parsed, "slot_tracker_lease_freed_bookings_total", { model })).toBe(0);
    expect(sampleValue(parsed, "slot_tracker_owned_bookings", { model, owner: OWNER })).toBe(1);
  });
});
