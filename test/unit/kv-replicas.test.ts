import { describe, expect, it } from "vitest";
import { applyReplicaEvent } from "../../durable-objects/core/replica/replica-merge";
import { decodeEvent, encodeEvent } from "../../durable-objects/replication/event-codec";
import { snapshotEvents } from "../../durable-objects/replication/snapshot";
import { HandReplica } from "./hand-replica";
import { batch, BLOCK, call, removed, stored } from "./kv-fixtures";
import { T0, worker } from "./tracker-fixtures";

/**
 * The engine-event index across replicas, changes carried by hand (and through the wire codec) so
 * each test fixes their order: a peer applies a writer's calls in order, the newer epoch wins, and a
 * snapshot rebuilds a replica that missed everything.
 */

/** A replica whose changes travel through the wire codec, as between objects. */
class Replica extends HandReplica {
  constructor(name: string) {
    super(name, {}, (event) => decodeEvent(encodeEvent(event)));
  }

  override shipTo(to: Replica, now = T0): void {
    super.shipTo(to, now);
  }

  dump(): unknown {
    return this.tracker.cache.dump();
  }
}

function pair(): [Replica, Replica] {
  const a = new Replica("a");
  const b = new Replica("b");
  a.tracker.register(worker(1, 0, 1, BLOCK), T0);
  a.shipTo(b);
  return [a, b];
}

describe("KV events across replicas", () => {
  it("gives a peer the writer's index, removals and clears included", () => {
    const [a, b] = pair();
    a.tracker.kvEvents(call(0, [batch(stored([1, 2, 3])), batch(stored([4], 3))]), T0);
    a.tracker.kvEvents(call(2, [batch(removed([4]), stored([5], 3))]), T0 + 1);
    a.shipTo(b);
    expect(b.tracker.cache.stats().entries).toBe(4);
    expect(b.dump()).toEqual(a.dump());
    expect(b.tracker.kv.stream(1n, 0)).toEqual(a.tracker.kv.stream(1n, 0));
  });

  it("ignores a copy of a call the peer applied already", () => {
    const [a, b] = pair();
    a.tracker.kvEvents(call(0, [batch(stored([1, 2]))]), T0);
    const [event] = a.outbox;
    a.tracker.kvEvents(call(1, [batch(removed([2]))]), T0);
    a.shipTo(b);
    applyReplicaEvent(b.tracker, event!, T0);
    expect(b.dump()).toEqual(a.dump());
  });

  it("lets the newer epoch win wherever each started, and drops the older one's later calls", () => {
    const [a, b] = pair();
    a.tracker.kvEvents(call(0, [batch(stored([1, 2]))]), T0);
    a.shipTo(b);
    // The sender moves to b, which cannot know it has every batch a took: a new epoch there.
    b.tracker.kvEvents(call(1, [batch(stored([7]))]), T0 + 10);
    // Meanwhile a took one more call of the old epoch.
    a.tracker.kvEvents(call(1, [batch(stored([3], 2))]), T0 + 5);
    a.shipTo(b);
    b.shipTo(a);
    expect(a.dump()).toEqual(b.dump());
    expect(a.tracker.kv.stream(1n, 0)?.epoch.key.origin).toBe("b");
    expect(a.tracker.cache.stats().entries).toBe(1);
  });

  it("rebuilds a replica that missed every call from a snapshot, in parts, and ignores a stale one", () => {
    const [a, b] = pair();
    const c = new Replica("c");
    // Four chains of 5,000 blocks: more than one part's 8,192.
    const chain = (from: number) => stored(Array.from({ length: 5_000 }, (_, i) => from + i));
    a.tracker.kvEvents(call(0, [batch(chain(10_000)), batch(chain(20_000)), batch(chain(30_000))]), T0);
    a.tracker.kvEvents(call(3, [batch(chain(40_000))]), T0);
    a.tracker.kvEvents(call(4, [batch(removed([10_001]))]), T0);
    a.shipTo(b);
    const snapshot = [...snapshotEvents(a.tracker)].filter((e) => e.type === "kv_rank");
    expect(snapshot.length).toBeGreaterThan(1);
    for (const event of snapshotEvents(a.tracker))
      applyReplicaEvent(c.tracker, decodeEvent(encodeEvent(event)), T0);
    expect(c.tracker.cache.stats().entries).toBe(a.tracker.cache.stats().entries);
    expect(c.dump()).toEqual(a.dump());
    expect(c.tracker.kv.stream(1n, 0)?.nextSeq).toBe(5);
    // b moved on; an older snapshot of a reaching it changes nothing.
    const stale = [...snapshotEvents(a.tracker)];
    a.tracker.kvEvents(call(5, [batch(removed([20_000]))]), T0 + 1);
    a.shipTo(b);
    for (const event of stale) applyReplicaEvent(b.tracker, event, T0);
    expect(b.dump()).toEqual(a.dump());
  });

  it("drops a call that reaches a peer after the worker's unregistration there", () => {
    const [a, b] = pair();
    a.tracker.kvEvents(call(0, [batch(stored([1]))]), T0);
    const late = a.outbox.splice(0);
    b.tracker.unregister(1n, T0 + 10);
    for (const event of late) applyReplicaEvent(b.tracker, event, T0 + 20);
    expect(b.tracker.kv.streams.size).toBe(0);
    expect(b.tracker.cache.stats().entries).toBe(0);
  });
});
