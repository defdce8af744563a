import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import type { AddInput } from "../../durable-objects/types";
import { h, req, T0, tracker, worker } from "./tracker-fixtures";

const EXPIRY_MS = 10_000;
const OWNED_MAX_AGE_MS = 100_000;
const TTL = 3_000;

function owned(id: string, owner: string, rank = 0): AddInput {
  return { ...req(id, 1, rank, h(1, 2, 3), 8), owner };
}

function fresh(): Tracker {
  const t = tracker({ expiryMs: EXPIRY_MS, ownedMaxAgeMs: OWNED_MAX_AGE_MS });
  t.register(worker(1, 0, 2), T0);
  return t;
}

const liveIds = (t: Tracker) => [...t.book.requests.keys()].sort();

describe("leases and owned bookings (SPEC §8)", () => {
  it("refuses a booking naming an owner without a live lease, naming the owner and the tracker, and changes nothing", () => {
    const t = fresh();
    expect(t.add(owned("a", "fe-1"), T0)).toEqual({
      ok: false,
      code: "lease_not_found",
      message: 'no live lease for model=model tenant=default owner "fe-1"',
    });
    expect(t.liveRequests).toBe(0);
    // A lapsed lease is no lease either.
    t.renewLease("fe-1", TTL, T0);
    expect(t.add(owned("a", "fe-1"), T0 + TTL)).toMatchObject({ code: "lease_not_found" });
    expect(t.liveRequests).toBe(0);
  });

  it("keeps owned bookings past the expiry age while the lease is renewed, and unowned ones expire as before", () => {
    const t = fresh();
    t.renewLease("fe-1", TTL, T0);
    expect(t.add(owned("a", "fe-1"), T0)).toEqual({ ok: true });
    expect(t.add(req("plain", 1, 1, h(9), 4), T0)).toEqual({ ok: true });
    for (let now = T0 + 1_000; now <= T0 + 3 * EXPIRY_MS; now += 1_000) t.renewLease("fe-1", TTL, now);
    expect(liveIds(t)).toEqual(["a"]);
    expect(t.listLeases(T0 + 3 * EXPIRY_MS)).toEqual([
      { owner: "fe-1", expiresAtMs: T0 + 3 * EXPIRY_MS + TTL, bookings: 1 },
    ]);
  });

  it("lapses exactly at the deadline: live 1 ms before, freed at it, and a renewal then starts a new lease", () => {
    const t = fresh();
    expect(t.renewLease("fe-1", TTL, T0)).toEqual({ ok: true, owner: "fe-1", expiresAtMs: T0 + TTL });
    t.add(owned("a", "fe-1"), T0);
    t.add(owned("b", "fe-1", 1), T0 + 10);
    expect(t.nextDeadline()).toBe(T0 + TTL - 1);
    expect(t.listLoads(T0 + TTL - 1).map((l) => l.activeDecodeBlocks)).toEqual([3, 3]);
    expect(t.listLoads(T0 + TTL).map((l) => l.activeDecodeBlocks)).toEqual([0, 0]);
    expect(t.lapsedCount).toBe(2);
    expect(t.listLeases(T0 + TTL)).toEqual([]);
    expect(t.renewLease("fe-1", TTL, T0 + TTL + 5)).toMatchObject({ expiresAtMs: T0 + 2 * TTL + 5 });
    expect(liveIds(t)).toEqual([]);
  });

  it("frees at once on delete; deleting a lease that is not live is a 404", () => {
    const t = fresh();
    t.renewLease("fe-1", TTL, T0);
    t.renewLease("fe-2", TTL, T0);
    t.add(owned("a", "fe-1"), T0);
    t.add(owned("b", "fe-2"), T0);
    expect(t.endLease("fe-1", T0 + 5)).toEqual({ ok: true, freed: 1 });
    expect(liveIds(t)).toEqual(["b"]);
    expect(t.endLease("fe-1", T0 + 6)).toMatchObject({ code: "lease_not_found" });
    expect(t.add(owned("c", "fe-1"), T0 + 7)).toMatchObject({ code: "lease_not_found" });
  });

  it("ends a lease deleted in the same millisecond as its newest grant, and a renewal after it starts a new one", () => {
    const t = fresh();
    t.renewLease("fe-1", TTL, T0);
    t.add(owned("a", "fe-1"), T0);
    // A renewal and the delete that follows it, both within T0's millisecond.
    t.renewLease("fe-1", TTL, T0 + 1);
    t.add(owned("b", "fe-1", 1), T0 + 1);
    expect(t.endLease("fe-1", T0 + 1)).toEqual({ ok: true, freed: 2 });
    expect(liveIds(t)).toEqual([]);
    expect(t.listLeases(T0 + 1)).toEqual([]);
    expect(t.add(owned("c", "fe-1"), T0 + 1)).toMatchObject({ code: "lease_not_found" });
    // Renewed again in that same millisecond: a new lease, with a deadline, and nothing of the old.
    const renewed = t.renewLease("fe-1", TTL, T0 + 1);
    expect(renewed).toMatchObject({ ok: true, owner: "fe-1", expiresAtMs: expect.any(Number) });
    expect((renewed as { expiresAtMs: number }).expiresAtMs).toBeGreaterThanOrEqual(T0 + 1 + TTL);
    expect(t.listLeases(T0 + 1)).toMatchObject([{ owner: "fe-1", bookings: 0 }]);
    expect(t.add(owned("d", "fe-1"), T0 + 1)).toEqual({ ok: true });
  });

  it("still ends an owned booking at the owned age guard while its lease lives", () => {
    const t = fresh();
    t.renewLease("fe-1", 600_000, T0);
    t.add(owned("a", "fe-1"), T0);
    expect(liveIds(t)).toEqual(["a"]);
    t.renewLease("fe-1", 600_000, T0 + OWNED_MAX_AGE_MS);
    expect(t.listLoads(T0 + OWNED_MAX_AGE_MS)[0]!.activeDecodeBlocks).toBe(3);
    expect(t.listLoads(T0 + OWNED_MAX_AGE_MS + 1)[0]!.activeDecodeBlocks).toBe(0);
  });

  it("never shortens a lease by a renewal with a shorter ttl", () => {
    const t = fresh();
    t.renewLease("fe-1", 60_000, T0);
    expect(t.renewLease("fe-1", 1_000, T0 + 1)).toMatchObject({ expiresAtMs: T0 + 60_000 });
  });

  it("caps live leases and bookings per owner with 429 texts naming the cap", () => {
    const t = tracker({ limits: { maxLeases: 2, maxBookingsPerOwner: 1 } });
    t.register(worker(1, 0, 1), T0);
    t.renewLease("a", TTL, T0);
    t.renewLease("b", TTL, T0);
    expect(t.renewLease("c", TTL, T0)).toEqual({
      ok: false,
      code: "limit_exceeded",
      message: "lease limit reached: at most 2 live leases per tracker",
    });
    // Renewing a live lease is no new lease.
    expect(t.renewLease("a", TTL, T0 + 1)).toMatchObject({ ok: true });
    t.add(owned("x", "a"), T0);
    expect(t.add(owned("y", "a"), T0)).toEqual({
      ok: false,
      code: "limit_exceeded",
      message: "owner booking limit reached: at most 1 live bookings per owner",
    });
  });

  it("keeps leases when the last worker leaves", () => {
    const t = fresh();
    t.renewLease("fe-1", TTL, T0);
    t.add(owned("a", "fe-1"), T0);
    t.unregister(1n, T0 + 1);
    expect(t.listLeases(T0 + 2)).toEqual([{ owner: "fe-1", expiresAtMs: T0 + TTL, bookings: 0 }]);
  });
});
