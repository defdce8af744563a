import { expect, it } from "vitest";
import type { EventKey } from "../../durable-objects/core/replica/clock";
import type { TimelineEvent } from "../../durable-objects/core/replica/events";
import type { AddEvent } from "../../durable-objects/core/replica/events";
import { applyReplicaEvent } from "../../durable-objects/core/replica/replica-merge";
import { NULL_STORE, type TrackerStore } from "../../durable-objects/core/store";
import { Tracker } from "../../durable-objects/core/tracker";
import type { RegisterInput } from "../../durable-objects/types";
import { observe } from "./replication-scenario";
import { Sim, type SimOptions } from "./replication-sim";
import { h, req, T0, worker } from "./tracker-fixtures";

/**
 * A decaying prefill is anchored at the same moment at every replica, whatever each learnt first
 * (`core/replica/departure-log.ts`): each case below is one a replica used to anchor differently, because
 * it never queued the request ahead, or dequeued it at another moment. Every prefill here is
 * 100 tokens expected to take 10 s, so the load of a front anchored `e` ms ago is 100 − e/100.
 */

const EXPIRY_MS = 30_000;
const S = 1_000;
const DECAYING = 10 * S;

function cluster(names: string[], options: Partial<SimOptions> = {}): Sim {
  return new Sim({ names, expiryMs: EXPIRY_MS, ...options }, T0);
}

function at<T>(sim: Sim, name: string, fn: (t: Tracker, now: number) => T): T {
  return sim.at(sim.replica(name), fn);
}

function add(sim: Sim, name: string, id: string, tokens = 100): void {
  expect(at(sim, name, (t, now) => t.add(req(id, 1, 0, h(1), tokens, DECAYING), now)).ok).toBe(true);
}

/** Ships `from`'s next batch to `to` and delivers it now (the flush delay first elapses). */
function ship(sim: Sim, from: string, to: string): void {
  sim.time += 10;
  sim.send(sim.replica(from), sim.replica(to));
  expect(sim.wire.length).toBe(1);
  sim.deliver(0);
}

/** The one rank's prefill tokens at `name`, read at `now`. */
function prefillAt(sim: Sim, name: string, now: number): number {
  return sim.replica(name).tracker.listLoads(now)[0]!.activePrefillTokens;
}

/** Settles the network and checks that every replica reads the same at `now`; returns the tokens. */
function converged(sim: Sim, now: number): number {
  sim.settle();
  const [first, ...rest] = sim.replicas.map((r) => observe(r.tracker, now));
  for (const [i, seen] of rest.entries()) expect(seen, sim.replicas[i + 1]!.name).toEqual(first);
  return first!.loads[0]!.activePrefillTokens;
}

function registered(sim: Sim): number {
  at(sim, sim.replicas[0]!.name, (t, now) => t.register(worker(1), now));
  sim.settle();
  return sim.time;
}

it("a free that reaches a replica before the add it frees still anchors the prefill behind at the free", () => {
  const sim = cluster(["a", "b", "c"]);
  const t0 = registered(sim);
  add(sim, "a", "r1");
  sim.time += 1;
  add(sim, "a", "r2");
  ship(sim, "a", "b");
  sim.time = t0 + 3 * S;
  expect(at(sim, "b", (t, now) => t.free("r1", now)).ok).toBe(true);
  ship(sim, "b", "c");
  ship(sim, "a", "c");
  // c never queued r1: its add arrived already freed.
  expect(sim.replica("c").tracker.liveRequests).toBe(1);
  expect(prefillAt(sim, "c", t0 + 8 * S)).toBe(50);
  expect(converged(sim, t0 + 8 * S)).toBe(50);
});

it("a request ahead that expires at one replica while a free of it travels ends at the free everywhere", () => {
  const sim = cluster(["a", "b"]);
  const t0 = registered(sim);
  add(sim, "a", "r1");
  sim.time += 10 * S;
  add(sim, "a", "r2");
  ship(sim, "a", "b");
  sim.time = t0 + EXPIRY_MS - 1 * S;
  expect(at(sim, "b", (t, now) => t.free("r1", now)).ok).toBe(true);
  // a's clock passes r1's deadline before the free arrives: it expires r1 there first.
  sim.time = t0 + EXPIRY_MS + 500;
  expect(at(sim, "a", (t, now) => t.listLoads(now)).length).toBe(1);
  expect(sim.replica("a").tracker.liveRequests).toBe(1);
  ship(sim, "b", "a");
  // Anchored at the free, 3 s before the read, not at r1's deadline 2 s before it.
  expect(prefillAt(sim, "a", t0 + EXPIRY_MS + 2 * S)).toBe(70);
  expect(converged(sim, t0 + EXPIRY_MS + 2 * S)).toBe(70);
});

it("a snapshot carries the departures a repaired replica anchors its prefills at", () => {
  const sim = cluster(["a", "b"], { maxBacklog: 2 });
  const t0 = registered(sim);
  add(sim, "a", "r1");
  sim.time += 1;
  add(sim, "a", "r2");
  sim.time = t0 + 3 * S;
  expect(at(sim, "a", (t, now) => t.free("r1", now)).ok).toBe(true);
  // Three events behind with a cap of two: b is caught up by snapshot, which no longer lists r1.
  ship(sim, "a", "b");
  expect(sim.stats.snapshotPages).toBeGreaterThan(0);
  const b = sim.replica("b").tracker;
  expect(b.liveRequests).toBe(1);
  expect(b.book.requests.get("r1")).toBeUndefined();
  expect(prefillAt(sim, "b", t0 + 8 * S)).toBe(50);
  expect(converged(sim, t0 + 8 * S)).toBe(50);
});

it("an add with a smaller key that arrives already completed still holds back the prefill behind it", () => {
  const sim = cluster(["a", "b", "c"]);
  const t0 = registered(sim);
  add(sim, "a", "r1");
  sim.time += 2;
  add(sim, "b", "r2");
  ship(sim, "a", "b");
  sim.time = t0 + 4 * S;
  // At b, r1 (the smaller key) is ahead of r2 and completes: r2 is anchored now.
  expect(at(sim, "b", (t, now) => t.prefillComplete("r1", now)).ok).toBe(true);
  ship(sim, "b", "c");
  ship(sim, "a", "c");
  // c had r2 at the front on its own, then r1 came with its prefill already complete.
  expect(sim.replica("c").tracker.request("r1")?.inPrefill).toBe(false);
  expect(prefillAt(sim, "c", t0 + 9 * S)).toBe(50);
  expect(converged(sim, t0 + 9 * S)).toBe(50);
});

it("a local change anchors at its key's time, which runs ahead of a clock that saw a faster peer", () => {
  const sim = cluster(["a", "b"], { skews: [40, 0] });
  const t0 = registered(sim);
  const aheadAt = sim.nowAt(sim.replica("a"));
  add(sim, "a", "r1", 40_000);
  ship(sim, "a", "b");
  // b's clock has seen r1's time, 30 ms ahead of its own: its next changes are stamped there.
  add(sim, "b", "r2", 40_000);
  expect(at(sim, "b", (t, now) => t.free("r1", now)).ok).toBe(true);
  const freedAt = aheadAt;
  expect(sim.nowAt(sim.replica("b"))).toBe(freedAt - 30);
  const readAt = t0 + 5 * S;
  const expected = 40_000 - Math.floor((40_000 * (readAt - freedAt)) / DECAYING);
  expect(prefillAt(sim, "b", readAt)).toBe(expected);
  expect(converged(sim, readAt)).toBe(expected);
});

function replicated(store: TrackerStore): Tracker {
  const options = { model: "model", tenant: "default", expiryMs: EXPIRY_MS, origin: "c", replicated: true };
  return new Tracker({ ...options, store });
}

/** An add by replica a, its key at `at` ms. */
function addEvent(requestId: string, at: number): AddEvent {
  return {
    ts: at * 1024,
    origin: "a",
    type: "add",
    requestId,
    workerId: 1n,
    dpRank: 0,
    hashes: h(1),
    newIslTokens: 100,
    expectedPrefillDurationMs: DECAYING,
    startedAt: at,
    deadline: at + EXPIRY_MS,
  };
}

it("a replica that restarts keeps the departures its prefill anchors derive from", () => {
  // What the object persists and hydrates for this: worker rows with their keys, timeline rows.
  const workers: [RegisterInput, EventKey][] = [];
  const timeline = new Map<string, TimelineEvent>();
  const store: TrackerStore = {
    ...NULL_STORE,
    workerAdded: (input, key) => workers.push([input, key]),
    timelineSet: (event) => timeline.set(`${event.ts}/${event.origin}`, event),
  };
  const running = replicated(store);
  applyReplicaEvent(running, { ts: T0 * 1024, origin: "a", type: "register", ...worker(1) }, T0);
  applyReplicaEvent(running, addEvent("r1", T0 + 1), T0 + 1);
  applyReplicaEvent(
    running,
    { ts: (T0 + 3 * S) * 1024, origin: "b", type: "free", requestId: "r1" },
    T0 + 3 * S,
  );
  // r1's add got a row of its own only once its booking (a requests row) had left.
  expect([...timeline.values()].map((e) => e.type).sort()).toEqual(["add", "free"]);
  const restarted = replicated(NULL_STORE);
  for (const [input, key] of workers) restarted.restoreWorker(input, key);
  for (const event of timeline.values()) restarted.departures?.restore(event);
  // r2 was booked at a right behind r1, but reaches this replica only now.
  for (const t of [running, restarted]) applyReplicaEvent(t, addEvent("r2", T0 + 2), T0 + 4 * S);
  const readAt = T0 + 8 * S;
  expect(restarted.listLoads(readAt)).toEqual(running.listLoads(readAt));
  expect(restarted.listLoads(readAt)[0]!.activePrefillTokens).toBe(50);
});
