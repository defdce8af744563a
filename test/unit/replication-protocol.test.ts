import { expect, it } from "vitest";
import type { ReplicaEvent } from "../../durable-objects/core/replica/events";
import type { Tracker } from "../../durable-objects/core/tracker";
import { encodeEvent } from "../../durable-objects/replication/event-codec";
import { Replicator } from "../../durable-objects/replication/replicator";
import { expectDrained, observe } from "./replication-scenario";
import { MemoryLog, Sim, type SimOptions } from "./replication-sim";
import { h, req, T0, worker } from "./tracker-fixtures";

/**
 * The replication protocol on the simulated network (`replication-sim.ts`): each origin's stream
 * is applied at most once and in order whatever the network repeats, and a peer that fell too far
 * behind is caught up by snapshot.
 */

const EXPIRY_MS = 30_000;

function cluster(names: string[], options: Partial<SimOptions> = {}): Sim {
  return new Sim({ names, expiryMs: EXPIRY_MS, ...options }, T0);
}

function at<T>(sim: Sim, name: string, fn: (t: Tracker, now: number) => T): T {
  return sim.at(sim.replica(name), fn);
}

/** What every replica reads just after the network settled, checked to be the same. */
function converged(sim: Sim) {
  sim.settle();
  const now = sim.time + 1;
  expectDrained(sim, now);
  const [first, ...rest] = sim.replicas.map((r) => observe(r.tracker, now));
  for (const [i, seen] of rest.entries()) expect(seen, sim.replicas[i + 1]!.name).toEqual(first);
  return first!;
}

it("a peer offline for longer than the backlog cap is resynced by snapshot and converges", () => {
  const sim = cluster(["a", "b", "c"], { maxBacklog: 5, maxBatch: 3 });
  at(sim, "a", (t, now) => t.register(worker(1), now));
  at(sim, "b", (t, now) => t.register(worker(2), now));
  converged(sim);
  sim.partition(new Set(["c"]));
  for (let i = 0; i < 12; i++) {
    const [name, workerId] = i % 2 === 0 ? ["a", 1] : ["b", 2];
    at(sim, name, (t, now) => t.add(req(`r${i}`, workerId, 0, h(i, i + 1), 10), now));
    if (i % 3 === 0) at(sim, name, (t, now) => t.prefillComplete(`r${i}`, now));
    if (i % 4 === 1) at(sim, "a", (t, now) => t.free(`r${i - 1}`, now));
    sim.time += 50;
    sim.flush();
    for (let k = sim.wire.length - 1; k >= 0; k--) sim.deliver(k);
  }
  const states = sim.replicas.flatMap((r) => r.replicator.status(sim.time).filter((p) => p.peer === "c"));
  expect(states.map((p) => p.state)).toEqual(["resync", "resync"]);
  const seen = converged(sim);
  expect(sim.stats.snapshotPages).toBeGreaterThan(0);
  expect(seen.live).toBe(9);
});

it("duplicated, retransmitted and replayed batches are applied at most once", () => {
  const sim = cluster(["a", "b"], { maxBatch: 3 });
  const [a, b] = sim.replicas as [Sim["replicas"][0], Sim["replicas"][0]];
  at(sim, "a", (t, now) => t.register(worker(1), now));
  at(sim, "a", (t, now) => t.add(req("r1", 1, 0, h(1), 10), now));
  at(sim, "a", (t, now) => t.add(req("r2", 1, 0, h(2), 20), now));
  at(sim, "a", (t, now) => t.free("r1", now));
  at(sim, "a", (t, now) => t.add(req("r1", 1, 0, h(3), 30), now));
  sim.time += 10;
  sim.send(a, b, "duplicate");
  // The first copy is applied but its answer is lost; the sender times out and the second copy
  // arrives as a replay.
  sim.deliver(0, "replyLost");
  const once = observe(b.tracker, sim.time);
  sim.timeout(0);
  sim.deliver(0);
  expect(observe(b.tracker, sim.time)).toEqual(once);
  // The retry resends the same events (nothing was acknowledged): all skipped, and acknowledged.
  sim.time += 1_000;
  sim.send(a, b);
  expect(sim.wire[0]!.batch).toMatchObject({ kind: "stream", firstSeq: 1 });
  sim.deliver(0);
  expect(observe(b.tracker, sim.time)).toEqual(once);
  expect(a.replicator.status(sim.time)[0]).toMatchObject({ acked: 3 });
  const seen = converged(sim);
  expect(sim.stats).toMatchObject({ stale: 1, duplicated: 1, timeouts: 1, applied: 5 });
  expect(seen.live).toBe(2);
});

/** A sender `a` with one peer `b`, whose snapshot is one unregistration. */
const UNREGISTER: ReplicaEvent = { ts: 1, origin: "a", type: "unregister", workerId: 9n };
function senderToB(options: {
  flushMs: number;
  maxBacklog?: number;
  maxBatch?: number;
  maxInFlight?: number;
  maxBatchBytes?: number;
  sizeOf?: (entry: Uint8Array) => number;
}) {
  return new Replicator({
    origin: "a",
    incarnation: "a-1",
    peers: ["b"],
    log: new MemoryLog(),
    encode: encodeEvent,
    snapshot: () => [UNREGISTER].values(),
    ...options,
  });
}

it("a page of a snapshot that was started over does not complete the resync that replaced it", () => {
  const event = UNREGISTER;
  const replicator = senderToB({ flushMs: 0, maxBacklog: 2 });
  for (let i = 0; i < 3; i++) replicator.append(encodeEvent(event), T0);
  const old = replicator.takeBatch("b", T0)!;
  expect(old).toMatchObject({ kind: "snapshot", final: true, upTo: 3 });
  // The backlog passes the cap again while that page is in flight: the resync starts over.
  for (let i = 0; i < 3; i++) replicator.append(encodeEvent(event), T0);
  replicator.acknowledge("b", old, { status: "ok", applied: 3 }, T0);
  expect(replicator.status(T0)[0]).toMatchObject({ state: "resync", acked: 0 });
  const fresh = replicator.takeBatch("b", T0)!;
  expect(fresh).toMatchObject({ kind: "snapshot", final: true, upTo: 6 });
  replicator.acknowledge("b", fresh, { status: "ok", applied: 6 }, T0);
  expect(replicator.status(T0)[0]).toMatchObject({ state: "ok", acked: 6, queued: 0 });
});

it("events still owed after an answer are due REPLICA_FLUSH_MS after they were queued, not after the answer", () => {
  const event = UNREGISTER;
  const replicator = senderToB({ flushMs: 10, maxBatch: 2 });
  for (let i = 0; i < 3; i++) replicator.append(encodeEvent(event), T0);
  expect(replicator.takeBatch("b", T0 + 9)).toBeNull();
  const first = replicator.takeBatch("b", T0 + 10)!;
  expect(first).toMatchObject({ kind: "stream", firstSeq: 1 });
  replicator.acknowledge("b", first, { status: "ok", applied: 2 }, T0 + 50);
  // The third event was queued at T0: its deadline passed while the first batch was in flight.
  expect(replicator.dueAt()).toBe(T0 + 10);
  const second = replicator.takeBatch("b", T0 + 50)!;
  expect(second).toMatchObject({ kind: "stream", firstSeq: 3 });
  // An event queued after that answer waits its own REPLICA_FLUSH_MS.
  replicator.acknowledge("b", second, { status: "ok", applied: 3 }, T0 + 60);
  replicator.append(encodeEvent(event), T0 + 70);
  expect(replicator.dueAt()).toBe(T0 + 80);
});

it("keeps up to maxInFlight batches in flight, each starting where the last one stopped", () => {
  const replicator = senderToB({ flushMs: 0, maxBatch: 2, maxInFlight: 3 });
  for (let i = 0; i < 9; i++) replicator.append(encodeEvent(UNREGISTER), T0);
  const sent = [1, 2, 3].map(() => replicator.takeBatch("b", T0)!);
  expect(sent.map((b) => [b.firstSeq, b.events.length])).toEqual([
    [1, 2],
    [3, 2],
    [5, 2],
  ]);
  expect(replicator.takeBatch("b", T0)).toBeNull();
  // An answer frees a place in the window; the stream continues after the last batch sent.
  expect(replicator.acknowledge("b", sent[0]!, { status: "ok", applied: 2 }, T0)).toBe(true);
  expect(replicator.takeBatch("b", T0)).toMatchObject({ firstSeq: 7 });
  expect(replicator.status(T0)[0]).toMatchObject({ acked: 2, queued: 7 });
});

it("a failure sends again from the acknowledged position, and ignores the answers of the batches sent before it", () => {
  const replicator = senderToB({ flushMs: 0, maxBatch: 2, maxInFlight: 3 });
  for (let i = 0; i < 6; i++) replicator.append(encodeEvent(UNREGISTER), T0);
  const [first, second, third] = [1, 2, 3].map(() => replicator.takeBatch("b", T0)!);
  replicator.acknowledge("b", first!, { status: "ok", applied: 2 }, T0);
  replicator.failed("b", second!, T0, false);
  // The third batch may still arrive; its answer changes nothing (the receiver applies in order).
  expect(replicator.acknowledge("b", third!, { status: "gap", applied: 2 }, T0)).toBe(false);
  expect(replicator.status(T0)[0]).toMatchObject({ state: "backing_off", acked: 2, queued: 4 });
  const due = replicator.dueAt()!;
  expect(replicator.takeBatch("b", due)).toMatchObject({ firstSeq: 3 });
});

it("a failed batch whose events a later answer acknowledged changes nothing", () => {
  const replicator = senderToB({ flushMs: 0, maxBatch: 2, maxInFlight: 2 });
  for (let i = 0; i < 4; i++) replicator.append(encodeEvent(UNREGISTER), T0);
  const [first, second] = [1, 2].map(() => replicator.takeBatch("b", T0)!);
  // The receiver applied both (the first's answer was lost); the second's answer says so.
  replicator.acknowledge("b", second!, { status: "ok", applied: 4 }, T0);
  replicator.failed("b", first!, T0, false);
  expect(replicator.status(T0)[0]).toMatchObject({ state: "ok", acked: 4, queued: 0, failures: 0 });
  expect(replicator.dueAt()).toBeNull();
});

it("a snapshot read across a merge that booked a request again keeps its prefill pending", () => {
  const sim = cluster(["a", "b"], { maxBatch: 2, maxBacklog: 1 });
  const [a, b] = sim.replicas as [Sim["replicas"][0], Sim["replicas"][0]];
  at(sim, "a", (t, now) => t.register(worker(1), now));
  sim.time += 1;
  at(sim, "b", (t, now) => t.register(worker(1), now));
  sim.time += 1;
  at(sim, "a", (t, now) => t.add(req("r", 1, 0, h(1), 10), now));
  sim.time += 10;
  sim.send(a, b);
  expect(sim.wire[0]!.batch).toMatchObject({ kind: "snapshot", final: false, events: { length: 2 } });
  sim.deliver(0);
  // B's newer registration reaches A between the pages: A sets r aside and books it again.
  sim.send(b, a);
  sim.deliver(0);
  const seen = converged(sim);
  expect(seen.loads.map((l) => ("activePrefillTokens" in l ? l.activePrefillTokens : -1))).toEqual([10]);
});

it("cuts a stream batch at maxBatchBytes, and ships an entry larger than that alone", () => {
  const replicator = senderToB({ flushMs: 0, maxBatchBytes: 100, sizeOf: (entry) => entry.length });
  for (const size of [40, 40, 40, 500, 10]) replicator.append(new Uint8Array(size), T0);
  const sizes: number[][] = [];
  for (let batch = replicator.takeBatch("b", T0); batch; batch = replicator.takeBatch("b", T0)) {
    sizes.push(batch.events.map((e) => e.length));
    replicator.acknowledge(
      "b",
      batch,
      { status: "ok", applied: batch.firstSeq + batch.events.length - 1 },
      T0,
    );
  }
  expect(sizes).toEqual([[40, 40], [40], [500], [10]]);
});
