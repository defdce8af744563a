import { expect, it } from "vitest";
import type { Tracker } from "../../durable-objects/core/tracker";
import { observe } from "./replication-scenario";
import { Sim, type SimOptions } from "./replication-sim";
import { h, req, T0, worker } from "./tracker-fixtures";

/**
 * The conflicts replicas must settle the same way whatever reaches whom first, each played out on
 * the simulated network (`replication-sim.ts`): the cases the issue names, and the divergences the
 * replication property test found, kept here as examples.
 */

const EXPIRY_MS = 30_000;

function cluster(names = ["a", "b"], options: Partial<SimOptions> = {}): Sim {
  return new Sim({ names, expiryMs: EXPIRY_MS, ...options }, T0);
}

function at<T>(sim: Sim, name: string, fn: (t: Tracker, now: number) => T): T {
  return sim.at(sim.replica(name), fn);
}

/** Ships `from`'s next batch to `to` and delivers it now (the flush delay first elapses). */
function ship(sim: Sim, from: string, to: string): void {
  sim.time += 10;
  sim.send(sim.replica(from), sim.replica(to));
  expect(sim.wire.length).toBe(1);
  sim.deliver(0);
}

/**
 * Settles the network and returns what every replica reads at one time (`readAt`, or just after
 * settling), having checked that they agree.
 */
function converged(sim: Sim, readAt?: number) {
  sim.settle();
  const now = readAt ?? sim.time + 1;
  expect(now).toBeGreaterThanOrEqual(sim.time);
  const [first, ...rest] = sim.replicas.map((r) => observe(r.tracker, now));
  for (const [i, seen] of rest.entries()) expect(seen, sim.replicas[i + 1]!.name).toEqual(first);
  return first!;
}

/** Decode blocks and prefill tokens per rank, in listing order. */
function loads(seen: ReturnType<typeof observe>): [number, number][] {
  return seen.loads.map((l) => [
    l.activeDecodeBlocks,
    "activePrefillTokens" in l ? l.activePrefillTokens : -1,
  ]);
}

it("a request added at A and freed at B before B saw the add is gone everywhere", () => {
  const sim = cluster();
  at(sim, "a", (t, now) => t.register(worker(1), now));
  converged(sim);
  expect(at(sim, "a", (t, now) => t.add(req("r", 1, 0, h(1, 2), 10), now)).ok).toBe(true);
  sim.time += 5;
  expect(at(sim, "b", (t, now) => t.free("r", now)).ok).toBe(true);
  const seen = converged(sim);
  expect(seen.live).toBe(0);
  expect(loads(seen)).toEqual([[0, 0]]);
});

it("the same request id added concurrently at A and B ends where the newer add put it, everywhere", () => {
  const sim = cluster();
  at(sim, "a", (t, now) => t.register(worker(1, 0, 2), now));
  converged(sim);
  at(sim, "a", (t, now) => t.add(req("r", 1, 0, h(1), 10), now));
  sim.time += 3;
  at(sim, "b", (t, now) => t.add(req("r", 1, 1, h(1, 2), 20), now));
  const seen = converged(sim);
  expect(seen.live).toBe(1);
  expect(loads(seen)).toEqual([
    [0, 0],
    [2, 20],
  ]);
});

it.each([
  { newer: "registration", dpSize: 2 },
  { newer: "unregistration", dpSize: undefined },
])(
  "a worker registered again at A while B unregisters it ends as the $newer says, everywhere",
  ({ newer, dpSize }) => {
    const sim = cluster();
    at(sim, "a", (t, now) => t.register(worker(1), now));
    at(sim, "a", (t, now) => t.register(worker(2), now));
    converged(sim);
    const reregister = () =>
      at(sim, "a", (t, now) => {
        t.unregister(1n, now);
        return t.register(worker(1, 0, 2), now);
      });
    const unregister = () => at(sim, "b", (t, now) => t.unregister(1n, now));
    if (newer === "registration") unregister();
    else expect(reregister().ok).toBe(true);
    sim.time += 5;
    if (newer === "registration") expect(reregister().ok).toBe(true);
    else unregister();
    const seen = converged(sim);
    expect(seen.workers.find((w) => w.workerId === 1n)?.dpSize).toBe(dpSize);
  },
);

it("an expiry at A while a free of the same request travels from B leaves the same state", () => {
  const sim = cluster();
  at(sim, "a", (t, now) => t.register(worker(1), now));
  at(sim, "a", (t, now) => t.add(req("r1", 1, 0, h(1), 10), now));
  sim.time += 1_000;
  at(sim, "a", (t, now) => t.add(req("r2", 1, 0, h(2), 20), now));
  converged(sim);
  sim.time = T0 + EXPIRY_MS - 5;
  at(sim, "b", (t, now) => t.free("r1", now));
  sim.time = T0 + EXPIRY_MS + 5;
  expect(at(sim, "a", (t, now) => t.listLoads(now))[0]!.activePrefillTokens).toBe(20);
  const seen = converged(sim);
  expect(seen.live).toBe(1);
  expect(loads(seen)).toEqual([[1, 20]]);
});

it("a free reaching a replica after the request's deadline ends it at the deadline there too", () => {
  const sim = cluster();
  at(sim, "a", (t, now) => t.register(worker(1), now));
  at(sim, "a", (t, now) => t.add(req("r1", 1, 0, h(1), 10), now));
  sim.time += 10_000;
  at(sim, "a", (t, now) => t.add(req("r2", 1, 0, h(2), 20, 4_000), now));
  converged(sim);
  // B frees r1 once its deadline has passed; A has not touched its tracker since.
  sim.time = T0 + EXPIRY_MS + 1_000;
  at(sim, "b", (t, now) => t.free("r1", now));
  const seen = converged(sim, T0 + EXPIRY_MS + 2_000);
  // r2 became the anchor when r1 expired, everywhere: 2,000 ms into its 4,000 ms decay.
  expect(loads(seen)).toEqual([[1, 10]]);
});

it("an add made at B after an unregistration it had not seen outlives it under the next registration", () => {
  const sim = cluster();
  at(sim, "a", (t, now) => t.register(worker(3), now));
  converged(sim);
  at(sim, "a", (t, now) => {
    t.unregister(3n, now);
    return t.register(worker(3), now);
  });
  sim.time += 5;
  expect(at(sim, "b", (t, now) => t.add(req("r", 3, 0, h(1), 10), now)).ok).toBe(true);
  const seen = converged(sim);
  expect(seen.live).toBe(1);
  expect(loads(seen)).toEqual([[1, 10]]);
});

it("a request booked after an older one left anchors its decay at its own booking, everywhere", () => {
  const sim = cluster();
  at(sim, "a", (t, now) => t.register(worker(1), now));
  converged(sim);
  const start = sim.time;
  at(sim, "a", (t, now) => t.add(req("r1", 1, 0, h(1), 10), now));
  sim.time += 10;
  at(sim, "a", (t, now) => t.prefillComplete("r1", now));
  sim.time += 100;
  at(sim, "b", (t, now) => t.add(req("r2", 1, 0, h(2), 20, 1_000), now));
  const seen = converged(sim, start + 110 + 500);
  expect(loads(seen)).toEqual([[2, 10]]);
});

it("an older add of a request id stays dead once the newest add of that id has left with its worker", () => {
  const sim = cluster(["a", "b", "c"]);
  at(sim, "a", (t, now) => t.register(worker(1), now));
  at(sim, "a", (t, now) => t.register(worker(2), now));
  converged(sim);
  at(sim, "a", (t, now) => t.add(req("r", 1, 0, h(1), 10), now));
  sim.time += 5;
  at(sim, "b", (t, now) => t.add(req("r", 2, 0, h(2), 10), now));
  ship(sim, "b", "c");
  at(sim, "c", (t, now) => t.unregister(2n, now));
  ship(sim, "c", "b");
  ship(sim, "a", "b");
  const seen = converged(sim);
  expect(seen.live).toBe(0);
});

it("a completion newer than a replaced add completes the add that replaced it, everywhere", () => {
  const sim = cluster();
  at(sim, "a", (t, now) => t.register(worker(1), now));
  converged(sim);
  at(sim, "a", (t, now) => t.add(req("r", 1, 0, h(1), 10), now));
  sim.time += 1;
  at(sim, "b", (t, now) => t.add(req("r", 1, 0, h(1), 30), now));
  sim.time += 5;
  expect(at(sim, "a", (t, now) => t.prefillComplete("r", now)).ok).toBe(true);
  const seen = converged(sim);
  expect(seen.live).toBe(1);
  expect(loads(seen)).toEqual([[1, 0]]);
});

it("unregistering the worker whose block size won hands the tracker to the set-aside workers everywhere", () => {
  const sim = cluster();
  at(sim, "a", (t, now) => t.register(worker(1, 0, 1, 16), now));
  sim.time += 1;
  at(sim, "b", (t, now) => t.register(worker(2, 0, 1, 32), now));
  expect(converged(sim).workers).toEqual([worker(1, 0, 1, 16)]);
  expect(at(sim, "a", (t, now) => t.unregister(1n, now))).toEqual({ ok: true, deleted: false });
  expect(converged(sim).workers).toEqual([worker(2, 0, 1, 32)]);
});
