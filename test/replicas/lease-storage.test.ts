/**
 * Leases across three replicas' storage: a lease and an owned booking made at one replica reach
 * the others over the real wire, each writes them through its replicated store, and every replica
 * still holds them, deadline and grant alike, after all objects are reset.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { converged, registered, type Replica, stubOf, unique } from "./fault-helpers";

interface Inside {
  tracker: Tracker;
  afterChange(): Promise<void>;
}

/** What a replica holds of leases and owned bookings, in memory and in its `leases` rows. */
function leaseView(replica: Replica, model: string, now: number) {
  return runInDurableObject(stubOf(replica, model), (instance, state) => {
    const { tracker } = instance as unknown as Inside;
    return {
      leases: tracker.listLeases(now),
      owned: [...tracker.book.requests.values()].map((r) => [r.id, r.owner, r.grantAt, r.grantDeadline]),
      rows: state.storage.sql.exec("SELECT owner, length(steps) AS steps FROM leases").toArray(),
    };
  });
}

describe("lease storage with replicas", () => {
  it("keeps a lease and its owned booking at every replica through a reset of every object", async () => {
    const model = unique();
    await registered(model);
    const now = Date.now();
    await runInDurableObject(stubOf("west", model), async (instance) => {
      const inside = instance as unknown as Inside;
      expect(inside.tracker.renewLease("fe-1", 120_000, now)).toMatchObject({ ok: true });
      const add = {
        requestId: "o1",
        workerId: 1n,
        dpRank: 2,
        hashes: new BigUint64Array([7n]),
        newIslTokens: 3,
      };
      expect(inside.tracker.add({ ...add, owner: "fe-1" }, now)).toEqual({ ok: true });
      // As a call through the object would end: the alarm that ships the changes is armed.
      await inside.afterChange();
    });
    const before = await converged((r) => leaseView(r, model, now + 1));
    expect(before.leases).toEqual([{ owner: "fe-1", expiresAtMs: now + 120_000, bookings: 1 }]);
    expect(before.owned).toEqual([["o1", "fe-1", now, now + 120_000]]);
    expect(before.rows).toEqual([{ owner: "fe-1", steps: 16 }]);

    await abortAllDurableObjects();
    for (const replica of ["east", "west", "apac"] as const) {
      expect(await leaseView(replica, model, now + 1)).toEqual(before);
    }
  });
});
