import { describe, expect, it } from "vitest";
import { listRecords } from "../../durable-objects/core/catalog/catalog-listing";
import type { WorkerUpsert } from "../../durable-objects/core/catalog/catalog-record";
import type { ReplicaEvent } from "../../durable-objects/core/replica/events";
import { applyReplicaEvent } from "../../durable-objects/core/replica/replica-merge";
import { NULL_STORE } from "../../durable-objects/core/store";
import { Tracker } from "../../durable-objects/core/tracker";
import { decodeEvent, encodeEvent } from "../../durable-objects/replication/event-codec";
import { snapshotEvents } from "../../durable-objects/replication/snapshot";
import { catalogRecordToWire } from "../../src/schema/selection/catalog-wire";
import { stringifyJson } from "../../src/wire/json-write";
import { h, req, T0 } from "./tracker-fixtures";

/**
 * The catalog's merge rule (`core/replica/catalog-merge.ts`) on hand-made conflicts: each set of
 * changes, made by real trackers at two origins, is merged into a fresh replica in every order (and
 * twice over), and every order must list the same records, byte for byte, and the same bookings.
 */

const EXPIRY_MS = 60_000;

function replica(origin: string, sink: ReplicaEvent[] = []): Tracker {
  const emitted = (event: ReplicaEvent) => {
    sink.push(decodeEvent(encodeEvent(event)));
  };
  return new Tracker({
    model: "model",
    tenant: "default",
    expiryMs: EXPIRY_MS,
    origin,
    replicated: true,
    store: { ...NULL_STORE, emitted },
  });
}

const record = (workerId: bigint, more: Partial<WorkerUpsert> = {}): WorkerUpsert => ({
  workerId,
  model: "model",
  endpoint: `http://w${workerId}`,
  blockSize: 16,
  ...more,
});

function* orders<T>(items: readonly T[]): Generator<T[]> {
  if (items.length <= 1) {
    yield [...items];
    return;
  }
  for (const [i, item] of items.entries()) {
    for (const rest of orders([...items.slice(0, i), ...items.slice(i + 1)])) yield [item, ...rest];
  }
}

function view(t: Tracker, now: number) {
  const catalog = listRecords(t.listCatalog(now));
  return {
    text: stringifyJson(catalog.map(catalogRecordToWire)),
    workers: t.listWorkers(now),
    live: [...t.book.requests.values()].map((r) => [r.id, r.slot.workerId, r.slot.dpRank]).sort(),
  };
}

/** Merges `events` in every order into fresh replicas; all must read the same, which is returned. */
function mergedEveryWay(events: ReplicaEvent[], now: number) {
  let first: ReturnType<typeof view> | undefined;
  for (const order of orders(events)) {
    const c = replica("c");
    for (const event of [...order, ...order]) applyReplicaEvent(c, event, now);
    const seen = view(c, now);
    if (first === undefined) first = seen;
    else expect(seen, order.map((e) => `${e.type}@${e.origin}`).join(" ")).toEqual(first);
  }
  return first!;
}

describe("catalog merge", () => {
  it("keeps the newer of two concurrent upserts of one worker, last writer wins", () => {
    const events: ReplicaEvent[] = [];
    const a = replica("a", events);
    const b = replica("b", events);
    a.upsertCatalog(record(1n, { endpoint: "http://from-a" }), T0);
    b.upsertCatalog(record(1n, { endpoint: "http://from-b", dpSize: 2 }), T0 + 5);
    const seen = mergedEveryWay(events, T0 + 10);
    expect(seen.text).toContain('"endpoint":"http://from-b"');
    expect(seen.workers).toEqual([{ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 2 }]);
  });

  it("lets no late upsert older than a removal bring the worker back, in any order", () => {
    const events: ReplicaEvent[] = [];
    const a = replica("a", events);
    const b = replica("b", events);
    a.upsertCatalog(record(1n), T0);
    b.upsertCatalog(record(1n, { endpoint: "http://stale" }), T0 + 2);
    applyReplicaEvent(a, events[1]!, T0 + 3);
    a.removeCatalog(1n, T0 + 4);
    expect(mergedEveryWay(events, T0 + 10)).toEqual({ text: "[]", workers: [], live: [] });
  });

  it("brings a worker back with an upsert newer than its removal, in any order", () => {
    const events: ReplicaEvent[] = [];
    const a = replica("a", events);
    const b = replica("b", events);
    a.upsertCatalog(record(1n), T0);
    a.removeCatalog(1n, T0 + 1);
    b.upsertCatalog(record(1n, { endpoint: "http://back" }), T0 + 5);
    expect(mergedEveryWay(events, T0 + 10).text).toContain('"endpoint":"http://back"');
  });

  it("keeps the bookings a range change kept and ends the others, in any order", () => {
    const events: ReplicaEvent[] = [];
    const a = replica("a", events);
    a.upsertCatalog(record(1n, { dpSize: 4 }), T0);
    a.add(req("kept", 1, 1, h(1), 10), T0 + 1);
    a.add(req("dropped", 1, 3, h(2), 10), T0 + 1);
    a.patchCatalog(1n, { dpSize: 2 }, T0 + 2);
    const seen = mergedEveryWay(events, T0 + 10);
    expect(seen.live).toEqual([["kept", 1n, 1]]);
    expect(seen).toEqual(view(a, T0 + 10));
  });

  it("ends bookings older than a concurrent removal even when a newer upsert keeps their rank", () => {
    const events: ReplicaEvent[] = [];
    const a = replica("a", events);
    const b = replica("b", events);
    a.upsertCatalog(record(1n, { dpSize: 2 }), T0);
    applyReplicaEvent(b, events[0]!, T0);
    a.add(req("old", 1, 0, h(1), 10), T0 + 1);
    applyReplicaEvent(b, events[1]!, T0 + 1);
    a.removeCatalog(1n, T0 + 2);
    // b has not seen the removal: its upsert keeps rank 0, and is newer.
    b.patchCatalog(1n, { endpoint: "http://b" }, T0 + 3);
    b.add(req("new", 1, 0, h(2), 10), T0 + 4);
    const seen = mergedEveryWay(events, T0 + 10);
    expect(seen.text).toContain('"endpoint":"http://b"');
    expect(seen.live).toEqual([["new", 1n, 0]]);
  });

  it("settles a /register at one replica against a concurrent catalog upsert by the newer key", () => {
    const events: ReplicaEvent[] = [];
    const a = replica("a", events);
    const b = replica("b", events);
    a.register({ workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 1 }, T0);
    b.upsertCatalog(record(1n, { dpSize: 3 }), T0 + 1);
    expect(mergedEveryWay(events, T0 + 10).workers).toEqual([
      { workerId: 1n, blockSize: 16, dpStart: 0, dpSize: 3 },
    ]);
  });

  it("rebuilds a replica that lost its state from a snapshot, floors included", () => {
    const events: ReplicaEvent[] = [];
    const a = replica("a", events);
    const b = replica("b", events);
    a.upsertCatalog(record(1n, { dpSize: 2 }), T0);
    applyReplicaEvent(b, events[0]!, T0);
    b.patchCatalog(1n, { dpSize: 3 }, T0 + 1);
    a.add(req("old", 1, 0, h(1), 10), T0 + 2);
    a.unregister(1n, T0 + 3);
    b.upsertCatalog(record(1n, { dpSize: 3, endpoint: "http://b2" }), T0 + 5);
    for (const event of events) {
      if (event.origin !== "a") applyReplicaEvent(a, event, T0 + 6);
    }
    const fresh = replica("c");
    for (const event of snapshotEvents(a)) applyReplicaEvent(fresh, decodeEvent(encodeEvent(event)), T0 + 7);
    expect(view(fresh, T0 + 8)).toEqual(view(a, T0 + 8));
    expect(view(a, T0 + 8).live).toEqual([]);
  });
});
