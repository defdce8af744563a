import { describe, expect, it } from "vitest";
import { HandReplica } from "./hand-replica";
import { h, T0, worker } from "./tracker-fixtures";

/**
 * Leases across replicas, with the changes carried by hand so each test fixes the order they arrive
 * in (the property test in `replication-property.test.ts` draws the orders at random): renewals at
 * one replica keep bookings alive at the others, a lapse frees them everywhere at the deadline, and
 * a renewal that arrives after its replica lapsed the lease resurrects nothing, there or at home.
 */

const EXPIRY_MS = 10_000;
const TTL = 3_000;

class Replica extends HandReplica {
  constructor(name: string) {
    super(name, { expiryMs: EXPIRY_MS });
  }

  live(now: number): string[] {
    this.tracker.expire(now);
    return [...this.tracker.book.requests.keys()].sort();
  }
}

function pair(): [Replica, Replica] {
  const a = new Replica("a");
  const b = new Replica("b");
  a.tracker.register(worker(1, 0, 2), T0);
  a.shipTo(b, T0);
  return [a, b];
}

const owned = (requestId: string, owner: string) => ({
  requestId,
  workerId: 1n,
  dpRank: 0,
  hashes: h(1, 2),
  newIslTokens: 4,
  owner,
});

describe("leases across replicas", () => {
  it("keeps bookings alive at the other replica while renewals made at one reach it in time", () => {
    const [a, b] = pair();
    a.tracker.renewLease("fe", TTL, T0);
    expect(a.tracker.add(owned("x", "fe"), T0)).toEqual({ ok: true });
    a.shipTo(b, T0 + 5);
    for (let now = T0 + 1_000; now <= T0 + 2 * EXPIRY_MS; now += 1_000) {
      a.tracker.renewLease("fe", TTL, now);
      a.shipTo(b, now + 5);
    }
    expect(b.live(T0 + 2 * EXPIRY_MS + 10)).toEqual(["x"]);
    expect(b.tracker.listLeases(T0 + 2 * EXPIRY_MS + 10)).toEqual(
      a.tracker.listLeases(T0 + 2 * EXPIRY_MS + 10),
    );
  });

  it("frees a lapsed owner's bookings at every replica at the deadline, with no other change arriving", () => {
    const [a, b] = pair();
    a.tracker.renewLease("fe", TTL, T0);
    a.tracker.add(owned("x", "fe"), T0);
    a.shipTo(b, T0 + 5);
    expect(b.live(T0 + TTL - 1)).toEqual(["x"]);
    expect(b.live(T0 + TTL)).toEqual([]);
    expect(a.live(T0 + TTL)).toEqual([]);
    // Both saw the same lapse; the cuts they ship change nothing at the other.
    a.shipTo(b, T0 + TTL + 1);
    b.shipTo(a, T0 + TTL + 1);
    expect(a.tracker.lapsedCount).toBe(1);
    expect(b.tracker.lapsedCount).toBe(1);
  });

  it("does not resurrect bookings when a renewal reaches a replica after the deadline passed there, and frees them at the renewal's home too", () => {
    const [a, b] = pair();
    a.tracker.renewLease("fe", TTL, T0);
    a.tracker.add(owned("x", "fe"), T0);
    a.shipTo(b, T0 + 5);
    // Renewed at a just before the deadline; the renewal is late to b.
    a.tracker.renewLease("fe", TTL, T0 + TTL - 10);
    expect(b.live(T0 + TTL + 100)).toEqual([]);
    a.shipTo(b, T0 + TTL + 200);
    expect(b.live(T0 + TTL + 200)).toEqual([]);
    expect(a.live(T0 + TTL + 200)).toEqual(["x"]);
    b.shipTo(a, T0 + TTL + 300);
    expect(a.live(T0 + TTL + 300)).toEqual([]);
    // The replicas agree on the lease too: the late renewal was clipped by the lapse at both.
    expect(a.tracker.listLeases(T0 + TTL + 300)).toEqual([]);
    expect(b.tracker.listLeases(T0 + TTL + 300)).toEqual([]);
    // A renewal after the lapse starts a new lease, which new bookings may use.
    a.tracker.renewLease("fe", TTL, T0 + TTL + 400);
    expect(a.tracker.add(owned("y", "fe"), T0 + TTL + 400)).toEqual({ ok: true });
    a.shipTo(b, T0 + TTL + 410);
    expect(b.live(T0 + TTL + 410)).toEqual(["y"]);
  });

  it("kills a booking made under a grant a cut it had not heard of had already ended", () => {
    const [a, b] = pair();
    a.tracker.renewLease("fe", TTL, T0);
    a.shipTo(b, T0 + 1);
    // b deletes the lease; a, not knowing, books under the old grant.
    expect(b.tracker.endLease("fe", T0 + 100)).toEqual({ ok: true, freed: 0 });
    expect(a.tracker.add(owned("x", "fe"), T0 + 200)).toEqual({ ok: true });
    a.shipTo(b, T0 + 300);
    b.shipTo(a, T0 + 300);
    expect(a.live(T0 + 300)).toEqual([]);
    expect(b.live(T0 + 300)).toEqual([]);
    expect(a.tracker.request("x")).toBeUndefined();
  });

  it("frees a deleted lease's bookings at every replica, whichever replica the delete reached", () => {
    const [a, b] = pair();
    a.tracker.renewLease("fe", TTL, T0);
    a.tracker.add(owned("x", "fe"), T0);
    a.shipTo(b, T0 + 5);
    expect(b.tracker.endLease("fe", T0 + 10)).toEqual({ ok: true, freed: 1 });
    b.shipTo(a, T0 + 20);
    expect(a.live(T0 + 20)).toEqual([]);
    expect(a.tracker.listLeases(T0 + 20)).toEqual([]);
  });
});
