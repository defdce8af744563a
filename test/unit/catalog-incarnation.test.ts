import { describe, expect, it } from "vitest";
import type { WorkerUpsert } from "../../durable-objects/core/catalog/catalog-record";
import { decodeEvent, encodeEvent } from "../../durable-objects/replication/event-codec";
import { catalogRecordToWire } from "../../src/schema/selection/catalog-wire";
import { stringifyJson } from "../../src/wire/json-write";
import { observe } from "./replication-scenario";
import { Sim } from "./replication-sim";
import { h, req, T0, tracker, worker } from "./tracker-fixtures";

/** Worker incarnations in the selection API's catalog (`catalog-writes.ts`, `slot-tracker-meeting.ts`). */

const record = (workerId: bigint, more: Partial<WorkerUpsert> = {}): WorkerUpsert => ({
  workerId,
  model: "model",
  endpoint: `http://w${workerId}:8000`,
  blockSize: 16,
  dpStart: 0,
  dpSize: 2,
  ...more,
});

const bookedIds = (t: ReturnType<typeof tracker>) => [...t.book.requests.values()].map((r) => r.id).sort();

describe("catalog incarnations", () => {
  it("drops every booking of the worker on an upsert with a higher incarnation, and installs its new range", () => {
    const t = tracker();
    t.upsertCatalog(record(7n, { incarnation: 1n }), T0);
    t.add(req("a", 7, 0, h(1), 10), T0);
    t.add(req("b", 7, 1, h(2), 10), T0);
    const answer = t.upsertCatalog(record(7n, { dpStart: 1, dpSize: 2, incarnation: 2n }), T0 + 1);
    expect(answer).toMatchObject({ ok: true, record: { lifecycle: "schedulable", incarnation: 2n } });
    expect(t.liveRequests).toBe(0);
    expect(t.listWorkers(T0 + 1)).toEqual([{ workerId: 7n, blockSize: 16, dpStart: 1, dpSize: 2 }]);
  });

  for (const [held, given] of [
    [1n, 1n],
    [3n, 1n],
    [3n, undefined],
    [undefined, undefined],
  ] as const) {
    it(`keeps the bookings on shared ranks for incarnation ${given} over ${held}, as an upsert does today`, () => {
      const t = tracker();
      t.upsertCatalog(record(7n, held === undefined ? {} : { incarnation: held }), T0);
      t.add(req("a", 7, 0, h(1), 10), T0);
      t.add(req("b", 7, 1, h(2), 10), T0);
      const answer = t.upsertCatalog(
        record(7n, { dpStart: 1, dpSize: 2, ...(given !== undefined && { incarnation: given }) }),
        T0 + 1,
      );
      expect(answer.ok).toBe(true);
      // Rank 1 is in both ranges; rank 0 left.
      expect(bookedIds(t)).toEqual(["b"]);
      // A POST replaces the record whole, its incarnation too.
      expect(t.listCatalog(T0 + 1)[0]!.incarnation).toBe(given);
    });
  }

  it("keeps the record's incarnation across a PATCH, and lists it last only when set", () => {
    const t = tracker();
    t.upsertCatalog(record(7n, { incarnation: 4n }), T0);
    t.upsertCatalog(record(8n), T0);
    const patched = t.patchCatalog(7n, { endpoint: "http://elsewhere" }, T0 + 1);
    expect(patched).toMatchObject({ ok: true, record: { incarnation: 4n } });
    const [seven, eight] = t.listCatalog(T0 + 1).map((r) => stringifyJson(catalogRecordToWire(r)));
    expect(seven).toMatch(/,"incarnation":4}$/);
    expect(eight).not.toContain("incarnation");
  });

  it("replaces a /register'ed worker's bookings only when the upsert's incarnation is higher than its registration's", () => {
    const t = tracker();
    t.register({ ...worker(7, 0, 2), incarnation: 5n }, T0);
    expect(t.listCatalog(T0)[0]).toMatchObject({ workerId: 7n, incarnation: 5n });
    t.add(req("a", 7, 1, h(1), 10), T0);
    t.upsertCatalog(record(7n, { incarnation: 5n }), T0 + 1);
    expect(bookedIds(t)).toEqual(["a"]);
    t.upsertCatalog(record(7n, { incarnation: 6n }), T0 + 2);
    expect(bookedIds(t)).toEqual([]);
  });

  it("answers /register of a catalog worker with today's 409 duplicate, a higher incarnation too", () => {
    const t = tracker();
    t.upsertCatalog(record(7n, { incarnation: 1n }), T0);
    t.add(req("a", 7, 0, h(1), 10), T0);
    expect(t.register({ ...worker(7), incarnation: 9n }, T0 + 1)).toEqual({
      ok: false,
      code: "duplicate_worker",
      message: "worker 7 already registered for model=model tenant=default",
    });
    expect(t.liveRequests).toBe(1);
  });

  it("carries the record's incarnation in its catalog_upsert event, and none when it has none", () => {
    const emitted: unknown[] = [];
    const t = tracker({
      replicated: true,
      store: {
        workerAdded: () => {},
        workerRemoved: () => {},
        requestAdded: () => {},
        prefillCompleted: () => {},
        anchorMoved: () => {},
        requestRemoved: () => {},
        trackerDeleted: () => {},
        emitted: (e) => emitted.push(decodeEvent(encodeEvent(e))),
      },
    });
    t.upsertCatalog(record(7n, { incarnation: 2n ** 64n - 1n }), T0);
    t.upsertCatalog(record(8n), T0);
    expect(emitted).toMatchObject([
      { type: "catalog_upsert", fields: { incarnation: 2n ** 64n - 1n } },
      { type: "catalog_upsert", fields: expect.not.objectContaining({ incarnation: expect.anything() }) },
    ]);
  });
});

describe("catalog incarnations between replicas", () => {
  it("drop the old life's bookings at every replica, and keep a booking made after the upsert elsewhere", () => {
    const sim = new Sim({ names: ["a", "b"], expiryMs: 30_000 }, T0);
    const at = <T>(name: string, fn: (t: ReturnType<typeof tracker>, now: number) => T) =>
      sim.at(sim.replica(name), fn);
    at("a", (t, now) => t.upsertCatalog(record(7n, { incarnation: 1n }), now));
    sim.settle();
    at("a", (t, now) => t.add(req("old-a", 7, 0, h(1), 10), now));
    at("b", (t, now) => t.add(req("old-b", 7, 1, h(2), 10), now));
    sim.settle();
    sim.time += 5;
    at("a", (t, now) => t.upsertCatalog(record(7n, { incarnation: 2n }), now));
    sim.time += 5;
    at("b", (t, now) => t.add(req("new-b", 7, 1, h(3), 10), now));
    sim.settle();
    const [first, second] = sim.replicas.map((r) => observe(r.tracker, sim.time + 1));
    expect(second).toEqual(first);
    expect(first!.live).toBe(1);
    for (const r of sim.replicas) expect(bookedIds(r.tracker)).toEqual(["new-b"]);
    expect(first!.catalog[0]).toMatchObject({ incarnation: 2n });
  });
});
