import fc from "fast-check";
import { expect } from "vitest";
import { listRecords } from "../../durable-objects/core/catalog/catalog-listing";
import type { LiveRequest } from "../../durable-objects/core/live-request";
import { Tracker } from "../../durable-objects/core/tracker";
import type { Result } from "../../durable-objects/types";
import { catalogRecordToWire } from "../../src/schema/selection/catalog-wire";
import { stringifyJson } from "../../src/wire/json-write";
import {
  type CatalogOp,
  catalogOpArbs,
  isCatalogOp,
  runCatalogOp,
  singleReplicaOp,
} from "./replication-catalog-ops";
import { type ReplyFate, type SendFate, Sim } from "./replication-sim";
import { h, T0 } from "./tracker-fixtures";

/**
 * Random replication scenarios for the property test: operations at replicas drawn from small
 * alphabets (few workers, request ids, prompts; the slot-tracker API's and the worker catalog's
 * writes on the same worker ids), interleaved with network steps, played on `Sim`.
 */

export const EXPIRY_MS = 30_000;
export const NAMES = ["a", "b", "c", "d"];
const WORKERS = [1n, 2n, 3n];
const IDS = ["r1", "r2", "r3", "r4"];
/** Frontends holding leases; an add names one of them or none. */
const OWNERS = ["f1", "f2"];
export const QUERIES: [BigUint64Array, number][] = [
  [h(), 0],
  [h(1), 5],
  [h(1, 2), 0],
  [h(2, 3, 1), 7],
];

export type Op =
  /** With an incarnation, a registered worker of a lower one is replaced (its bookings dropped). */
  | { op: "register"; workerId: bigint; blockSize: number; dpSize: number; incarnation?: bigint | undefined }
  | { op: "unregister"; workerId: bigint }
  | {
      op: "add";
      requestId: string;
      slot: number;
      hashes: bigint[];
      newIslTokens: number;
      duration: number | undefined;
      owner: string | undefined;
    }
  | { op: "free" | "prefillComplete"; requestId: string }
  | { op: "renew"; owner: string; ttlMs: number }
  | { op: "endLease"; owner: string }
  | CatalogOp;

export type Step =
  | { kind: "op"; at: number; op: Op }
  | { kind: "advance"; ms: number }
  | { kind: "send"; from: number; to: number; fate: SendFate }
  | { kind: "flush"; fate: SendFate }
  | { kind: "deliver"; pick: number; fate: ReplyFate }
  | { kind: "timeout"; pick: number }
  /** Cuts the replicas whose bit is set off the others; 0 heals. */
  | { kind: "partition"; side: number };

const requestId = fc.constantFrom(...IDS);
const workerId = fc.constantFrom(...WORKERS);
const registration = {
  op: fc.constant("register" as const),
  workerId,
  blockSize: fc.constantFrom(16, 16, 16, 32),
  dpSize: fc.constantFrom(1, 2),
};

/**
 * The operations, with or without incarnations on registrations and catalog upserts. Without, the
 * draws are those from before incarnations existed (a field more changes every later draw), so the
 * scenarios the other properties were shrunk and tuned on stay the same.
 */
const opArbOf = (incarnations: boolean): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 2,
      arbitrary: incarnations
        ? fc.record({ ...registration, incarnation: fc.constantFrom(undefined, undefined, 1n, 2n, 3n) })
        : fc.record(registration),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("unregister" as const), workerId }) },
    {
      weight: 5,
      arbitrary: fc.record({
        op: fc.constant("add" as const),
        requestId,
        slot: fc.nat({ max: 4 }),
        hashes: fc.array(fc.constantFrom(1n, 2n, 3n), { maxLength: 3 }),
        // Large prefills too, so that an anchor off by a millisecond shows in the decayed tokens.
        newIslTokens: fc.constantFrom(0, 10, 25, 40_000),
        // Some still decaying when the network has settled, whatever it took (longer than the expiry age).
        duration: fc.constantFrom(undefined, undefined, 0, 400, 4_000, 15_000, 4 * EXPIRY_MS),
        owner: fc.constantFrom(undefined, undefined, ...OWNERS),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant("renew" as const),
        owner: fc.constantFrom(...OWNERS),
        // Lapsing between steps, across an advance, and outliving the expiry age.
        ttlMs: fc.constantFrom(1_000, 7_000, EXPIRY_MS + 10_000),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ op: fc.constant("endLease" as const), owner: fc.constantFrom(...OWNERS) }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constantFrom("free" as const), requestId }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constantFrom("prefillComplete" as const), requestId }) },
    ...catalogOpArbs(workerId, incarnations),
  );

const index = fc.nat({ max: 7 });
const stepArbOf = (incarnations: boolean): fc.Arbitrary<Step> =>
  fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({ kind: fc.constant("op" as const), at: index, op: opArbOf(incarnations) }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("advance" as const),
        ms: fc.constantFrom(0, 1, 7, 10, 120, 700, EXPIRY_MS - 1, EXPIRY_MS + 1, 3 * EXPIRY_MS),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("send" as const),
        from: index,
        to: index,
        fate: fc.constantFrom<SendFate>("deliver", "deliver", "drop", "duplicate"),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("flush" as const),
        fate: fc.constantFrom<SendFate>("deliver", "deliver", "drop", "duplicate"),
      }),
    },
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("deliver" as const),
        pick: index,
        fate: fc.constantFrom<ReplyFate>("ok", "ok", "ok", "replyLost", "overloaded"),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("timeout" as const), pick: index }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("partition" as const), side: fc.nat({ max: 15 }) }),
    },
  );

const scenarioArbOf = (incarnations: boolean) =>
  fc.record({
    n: fc.integer({ min: 2, max: 4 }),
    skews: fc.array(fc.nat({ max: 50 }), { minLength: 4, maxLength: 4 }),
    maxBatch: fc.constantFrom(3, 256),
    /** Stream batches in flight per peer: one, or a window of several (as the object sends). */
    maxInFlight: fc.constantFrom(1, 4),
    maxBacklog: fc.constantFrom(6, 20, 100_000),
    seed: fc.nat(),
    /** Whether adds may carry an expected prefill duration (decaying prefill load). */
    decay: fc.boolean(),
    steps: fc.array(stepArbOf(incarnations), { minLength: 20, maxLength: 100, size: "max" }),
  });
export const scenarioArb = scenarioArbOf(false);
/** Scenarios whose registrations and catalog upserts may carry incarnations, replacing workers. */
export const incarnationScenarioArb = scenarioArbOf(true);
export type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

/** Runs a local operation; an add aims at the tracker's `slot`-th rank when it has one. */
export function runOp(t: Tracker, op: Op, now: number, decay = true): Result {
  switch (op.op) {
    case "register": {
      const replaces = t.book.workers.has(op.workerId);
      const result = t.register(
        {
          workerId: op.workerId,
          blockSize: op.blockSize,
          dpStart: 0,
          dpSize: op.dpSize,
          ...(op.incarnation !== undefined && { incarnation: op.incarnation }),
        },
        now,
      );
      if (replaces && result.ok) totals.replacements++;
      return result;
    }
    case "unregister":
      return t.unregister(op.workerId, now);
    case "add": {
      const slots = t.book.sortedSlots();
      const target = slots[op.slot % Math.max(1, slots.length)];
      return t.add(
        {
          requestId: op.requestId,
          workerId: target?.workerId ?? 1n,
          dpRank: target?.dpRank ?? 0,
          hashes: h(...op.hashes),
          newIslTokens: op.newIslTokens,
          ...(op.duration === undefined || !decay ? {} : { expectedPrefillDurationMs: op.duration }),
          ...(op.owner === undefined ? {} : { owner: op.owner }),
        },
        now,
      );
    }
    case "free":
      return t.free(op.requestId, now);
    case "prefillComplete":
      return t.prefillComplete(op.requestId, now);
    case "renew":
      return t.renewLease(op.owner, op.ttlMs, now);
    case "endLease":
      return t.endLease(op.owner, now);
    case "upsert":
    case "patchRange":
    case "remove":
      return runCatalogOp(t, op, now);
  }
}

/**
 * Everything a client can read at `now`, as one comparable value, with each rank's pending prefills
 * (request ids and tokens in queue order) and the time its front was anchored at if it decays: a
 * sharper check than the decayed tokens at a few read times, which a finished decay hides.
 */
export function observe(t: Tracker, now: number) {
  const catalog = listRecords(t.listCatalog(now));
  return {
    catalog,
    // What the selection API writes for them, byte for byte.
    catalogText: stringifyJson(catalog.map(catalogRecordToWire)),
    workers: t.listWorkers(now),
    loads: t.listLoads(now),
    potential: QUERIES.map(([q, tokens]) => {
      const r = t.potentialLoads(q, tokens, now);
      return r.ok ? r.loads : r.code;
    }),
    live: t.liveRequests,
    leases: t.listLeases(now),
    prefill: t.book.sortedSlots().map(({ prefill }) => {
      const queue: [string, number][] = [];
      for (let e = prefill.head; e; e = e.prefillNext) queue.push([(e as LiveRequest).id, e.prefillTokens]);
      const decays = prefill.head !== null && !Number.isNaN(prefill.head.prefillDurationMs);
      return { queue, anchorAt: decays ? prefill.anchorTime() : null };
    }),
  };
}

/** What the network did over all runs, so the test can check each path was taken. */
export const totals = {
  runs: 0,
  batches: 0,
  snapshotPages: 0,
  dropped: 0,
  duplicated: 0,
  stale: 0,
  timeouts: 0,
  applied: 0,
  /** Owned bookings freed by a lease's end somewhere (the no-resurrection check's subjects). */
  cutFreed: 0,
  /** Registrations that replaced a worker of a lower incarnation (at any replica, mirror included). */
  replacements: 0,
};

/**
 * Plays a scenario. With `single`, every operation happens at the first replica and is mirrored on
 * a plain, unreplicated tracker. With `settleAround`, the network settles before and after each step
 * it says. Returns the settled simulation, the mirror and a common read time.
 */
export function play(
  s: Scenario,
  single: boolean,
  settleAround?: (step: Scenario["steps"][number]) => boolean,
) {
  const names = NAMES.slice(0, s.n);
  const sim = new Sim(
    {
      names,
      expiryMs: EXPIRY_MS,
      skews: s.skews,
      maxBatch: s.maxBatch,
      maxInFlight: s.maxInFlight,
      maxBacklog: s.maxBacklog,
      seed: s.seed,
    },
    T0,
  );
  const mirror = new Tracker({ model: "model", tenant: "default", expiryMs: EXPIRY_MS });
  const at = (i: number) => sim.replicas[i % s.n]!;
  const cutFreed = new CutFreed();
  for (const step of s.steps) {
    cutFreed.before(sim.replicas.map((r) => r.tracker));
    const settling = settleAround?.(step) ?? false;
    if (settling) sim.settle();
    switch (step.kind) {
      case "op": {
        const r = single ? sim.replicas[0]! : at(step.at);
        const op = single ? singleTrackerOp(step.op) : step.op;
        if (op === null) break;
        const result = sim.at(r, (t, now) => runOp(t, op, now, s.decay));
        if (single) expect(runOp(mirror, op, sim.nowAt(r), s.decay)).toEqual(result);
        break;
      }
      case "advance":
        sim.time += step.ms;
        break;
      case "send":
        if (step.from % s.n !== step.to % s.n) sim.send(at(step.from), at(step.to), step.fate);
        break;
      case "flush":
        sim.flush(step.fate);
        break;
      case "deliver":
        if (sim.wire.length > 0) sim.deliver(step.pick % sim.wire.length, step.fate);
        break;
      case "timeout":
        if (sim.pending.size > 0) sim.timeout(step.pick % sim.pending.size);
        break;
      case "partition":
        sim.partition(new Set(names.filter((_, i) => (step.side >> i) & 1)));
        break;
    }
    if (settling) sim.settle();
    cutFreed.after(sim.replicas.map((r) => r.tracker));
  }
  sim.settle();
  cutFreed.expectNoneLive(sim.replicas.map((r) => r.tracker));
  totals.runs++;
  for (const key of Object.keys(sim.stats) as (keyof typeof sim.stats)[]) totals[key] += sim.stats[key];
  return { sim, mirror, now: sim.time + 51 };
}

/**
 * The replication protocol itself is at rest: every event acknowledged and applied (at most once:
 * exactly once each where no snapshot stood in for part of a stream), every log trimmed empty.
 */
export function expectDrained(sim: Sim, now: number) {
  for (const r of sim.replicas) {
    expect(r.log.size, `${r.name} log`).toBe(0);
    for (const peer of r.replicator.status(now))
      expect(peer, `${r.name}→${peer.peer}`).toMatchObject({ state: "ok", queued: 0 });
    for (const other of sim.replicas) {
      if (other === r || other.replicator.lastSeq === 0) continue;
      expect(r.inbox.position(other.name)?.applied, `${r.name} applied of ${other.name}`).toBe(
        other.replicator.lastSeq,
      );
    }
  }
  let emitted = 0;
  for (const r of sim.replicas) emitted += r.replicator.lastSeq * (sim.replicas.length - 1);
  if (sim.stats.snapshotPages === 0) expect(sim.stats.applied, "stream events applied").toBe(emitted);
  else expect(sim.stats.applied).toBeLessThanOrEqual(emitted);
}

/**
 * No resurrection: an owned booking that left a replica because its lease was cut after its grant
 * there (a lapse or delete) must be live nowhere once the network has settled. Bookings are told
 * apart by their add's key, so a newer add of the same id is another booking.
 */
class CutFreed {
  private readonly freed = new Set<string>();
  private seen: Map<string, LiveRequest>[] = [];

  private static key(req: LiveRequest): string {
    return `${req.id}@${req.addTs}@${req.origin}`;
  }

  private static owned(t: Tracker): Map<string, LiveRequest> {
    const out = new Map<string, LiveRequest>();
    for (const req of t.book.requests.values()) if (req.owner !== null) out.set(CutFreed.key(req), req);
    return out;
  }

  before(trackers: Tracker[]): void {
    this.seen = trackers.map(CutFreed.owned);
  }

  after(trackers: Tracker[]): void {
    for (const [i, t] of trackers.entries()) {
      const now = CutFreed.owned(t);
      for (const [key, req] of this.seen[i]!) {
        if (now.has(key)) continue;
        if (t.leases.get(req.owner!)?.cutAfter(req.grantAt)) this.freed.add(key);
      }
    }
  }

  expectNoneLive(trackers: Tracker[]): void {
    for (const t of trackers) {
      for (const key of CutFreed.owned(t).keys())
        expect(this.freed.has(key), `${t.origin} holds ${key}, freed by a lease's end`).toBe(false);
    }
    totals.cutFreed += this.freed.size;
  }
}

/**
 * What an operation is in the single-tracker comparison: the catalog's as `singleReplicaOp` says,
 * and no lease. A lease is not what one tracker makes of it once a renewal can be delayed past the
 * deadline it extends: then the replica it reached late records the lapse and every replica frees
 * the bookings (the no-resurrection rule, `core/lease/lease-table.ts`), where a single tracker kept
 * them. Leases are covered by the other properties and the no-resurrection check instead.
 */
function singleTrackerOp(op: Op): Op | null {
  if (op.op === "renew" || op.op === "endLease") return null;
  if (op.op === "add" && op.owner !== undefined) return { ...op, owner: undefined };
  return isCatalogOp(op) ? singleReplicaOp(op) : op;
}
