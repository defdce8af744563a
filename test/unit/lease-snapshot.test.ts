/**
 * A peer caught up by snapshot (`replication/snapshot.ts`) gets every lease, steps and cuts, and
 * every owned booking with its owner and grant, through the wire codec; and a cut it learns that
 * way ends what it had booked under an earlier grant.
 */
import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { applyReplicaEvent } from "../../durable-objects/core/replica/replica-merge";
import { decodeEvent, encodeEvent } from "../../durable-objects/replication/event-codec";
import { snapshotEvents } from "../../durable-objects/replication/snapshot";
import { h, req, T0, tracker, worker } from "./tracker-fixtures";

function replica(origin: string): Tracker {
  const t = tracker({ origin, replicated: true, expiryMs: 10_000, ownedMaxAgeMs: 100_000 });
  t.register(worker(1, 0, 2), T0);
  return t;
}

/** Merges `from`'s snapshot into `to`, every event through the codec. */
function catchUp(from: Tracker, to: Tracker, now: number): void {
  for (const event of snapshotEvents(from)) applyReplicaEvent(to, decodeEvent(encodeEvent(event)), now);
}

const leasesOf = (t: Tracker) =>
  [...t.leases.all()]
    .map(({ owner, steps, cuts }) => ({ owner, steps, cuts }))
    .sort((a, b) => (a.owner < b.owner ? -1 : 1));

const ownedOf = (t: Tracker) =>
  [...t.book.requests.values()]
    .map((r) => [r.id, r.owner, r.grantAt, r.grantDeadline])
    .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));

describe("lease snapshots", () => {
  it("carries leases with their steps and cuts, and owned bookings with their owner and grant", () => {
    const a = replica("a");
    a.renewLease("fe-1", 10_000, T0);
    // A shorter renewal adds a step: the lease has two grants to remember.
    a.renewLease("fe-1", 2_000, T0 + 100);
    a.renewLease("fé-2 🚀", 3_000, T0 + 200);
    expect(a.add({ ...req("o1", 1, 0, h(1, 2), 8), owner: "fe-1" }, T0 + 300)).toEqual({ ok: true });
    expect(a.add({ ...req("o2", 1, 1, h(3), 4), owner: "fé-2 🚀" }, T0 + 300)).toEqual({ ok: true });
    expect(a.add(req("plain", 1, 1, h(4), 4), T0 + 300)).toEqual({ ok: true });
    a.renewLease("fe-3", 1_000, T0 + 400);
    // fe-3 lapses (a cut at its deadline, nothing else left); fé-2's is deleted, its booking freed.
    expect(a.endLease("fé-2 🚀", T0 + 1_500)).toEqual({ ok: true, freed: 1 });
    expect(leasesOf(a).map((l) => [l.owner, l.steps.length, l.cuts.length])).toEqual([
      ["fe-1", 2, 0],
      ["fe-3", 0, 1],
      ["fé-2 🚀", 0, 1],
    ]);

    const b = replica("b");
    catchUp(a, b, T0 + 1_600);
    expect(leasesOf(b)).toEqual(leasesOf(a));
    expect(ownedOf(b)).toEqual(ownedOf(a));
    expect(ownedOf(b)).toEqual([
      ["o1", "fe-1", T0 + 100, T0 + 2_100],
      ["plain", null, Number.NaN, Number.NaN],
    ]);
    expect(b.listLeases(T0 + 1_600)).toEqual(a.listLeases(T0 + 1_600));
    // The deadline that travelled frees the booking at the peer too, at the same moment.
    expect(b.listLeases(T0 + 10_000)).toEqual([]);
    expect([...b.book.requests.keys()]).toEqual(["plain"]);
  });

  it("ends a booking the peer made under a grant that a cut in the snapshot ends", () => {
    const a = replica("a");
    const b = replica("b");
    b.renewLease("fe-1", 5_000, T0);
    catchUp(b, a, T0 + 10);
    expect(b.add({ ...req("late", 1, 0, h(1), 1), owner: "fe-1" }, T0 + 20)).toEqual({ ok: true });
    // `a` ends the lease; `b`, which has not heard of it, learns it from `a`'s snapshot.
    expect(a.endLease("fe-1", T0 + 30)).toEqual({ ok: true, freed: 0 });
    catchUp(a, b, T0 + 40);
    expect(b.book.requests.size).toBe(0);
    expect(leasesOf(b)).toEqual(leasesOf(a));
    expect(b.listLeases(T0 + 40)).toEqual([]);
  });
});
