import fc from "fast-check";
import { expect, it } from "vitest";
import type { Tracker, TrackerLimits } from "../../durable-objects/core/tracker";
import type { AddInput, RegisterInput } from "../../durable-objects/types";
import { h, RecordingStore, T0, tracker, U32_MAX, U64_MAX } from "./tracker-fixtures";
import { type ModelResult, TrackerModel } from "./tracker-model";

/**
 * The optimised tracker against the plain model, over random operation sequences drawn from small
 * alphabets so that collisions are the rule: shared prefixes, one hash at several depths, the same
 * hash on several ranks, reused request ids, dp ranges at the u32 edge, caps reached, and clock jumps
 * around the expiry age. fast-check prints the seed and the shrunk sequence of any failure.
 */

const EXPIRY_MS = 10_000;
const LIMITS: TrackerLimits = {
  maxLiveRequests: 4,
  maxLiveBlocks: 9,
  maxWorkers: 2,
  maxRanks: 4,
  maxCacheEntries: 64,
  maxCachedBlocks: 64,
  maxLeases: 4,
  maxBookingsPerOwner: 4,
};
const WORKERS = [1n, 2n ** 53n + 1n, U64_MAX];
const RANKS = [0, 0, 0, 1, 1, 2, 3, U32_MAX - 2, U32_MAX - 1];
const IDS = ["a", "b", "c", "d", "e", "f"];

type Op =
  | ({ op: "register" } & RegisterInput)
  | { op: "unregister"; workerId: bigint }
  | { op: "add"; input: AddInput; slot: number }
  | { op: "prefillComplete" | "free"; requestId: string }
  /** The clock moves; with `sweep`, an alarm-like `expire(now)` runs before anything else sees it. */
  | { op: "advance"; ms: number; sweep: boolean };

const workerId = fc.constantFrom(...WORKERS);
const requestId = fc.constantFrom(...IDS);
const hash = fc.constantFrom(0n, 1n, 2n, 3n, 4n, 5n, U64_MAX);
const prompt = fc.array(hash, { maxLength: 5 }).map((xs) => h(...xs));

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("register" as const),
      workerId,
      blockSize: fc.constantFrom(16, 16, 16, 32, 0),
      dpStart: fc.constantFrom(0, 0, 1, 2, U32_MAX - 2, U32_MAX - 1, U32_MAX),
      dpSize: fc.constantFrom(1, 1, 2, 3, 0),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("unregister" as const), workerId }) },
  {
    weight: 8,
    arbitrary: fc
      .record({
        requestId,
        workerId,
        dpRank: fc.constantFrom(...RANKS),
        hashes: prompt,
        newIslTokens: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 100 })),
        duration: fc.option(fc.constantFrom(0, 1_000, 5_000, 20_000), { nil: undefined, freq: 2 }),
        slot: fc.nat({ max: 4 }),
      })
      .map(({ duration, slot, ...input }): Op => {
        const add: AddInput = input;
        if (duration !== undefined) add.expectedPrefillDurationMs = duration;
        return { op: "add", input: add, slot };
      }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("prefillComplete" as const), requestId }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("free" as const), requestId }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("advance" as const),
      ms: fc.constantFrom(0, 1, 999, 3_000, EXPIRY_MS - 1, EXPIRY_MS, EXPIRY_MS + 1, 25_000),
      sweep: fc.boolean(),
    }),
  },
);

/** 1–3 registrations that are mostly valid, so that most sequences have a tracker to work on. */
const setupArb = fc.array(
  fc.record({
    op: fc.constant("register" as const),
    workerId,
    blockSize: fc.constant(16),
    dpStart: fc.constantFrom(0, 0, 1, U32_MAX - 2),
    dpSize: fc.constantFrom(1, 2, 3),
  }),
  { minLength: 1, maxLength: 3 },
);
const opsArb = fc
  .tuple(setupArb, fc.array(opArb, { maxLength: 60, size: "max" }))
  .map(([setup, ops]): Op[] => [...setup, ...ops]);

const queriesArb = fc.array(fc.tuple(prompt, fc.integer({ min: 0, max: 50 })), {
  minLength: 3,
  maxLength: 3,
});

function outcome(result: { ok: true } | { ok: false; code: string }): ModelResult {
  return result.ok ? { ok: true } : ({ ok: false, code: result.code } as ModelResult);
}

/**
 * An add aims at the `slot`-th registered rank when there is one, so that most adds land; past the
 * registered ranks it keeps its drawn (worker, rank), which may be unregistered.
 */
function aim(op: Op, ranks: [bigint, number][]): Op {
  const target = op.op === "add" ? ranks[op.slot] : undefined;
  if (op.op !== "add" || !target) return op;
  return { ...op, input: { ...op.input, workerId: target[0], dpRank: target[1] } };
}

function apply(t: Tracker | TrackerModel, op: Op, now: number): ModelResult | number {
  switch (op.op) {
    case "register": {
      const { op: _, ...input } = op;
      return outcome(t.register(input, now));
    }
    case "unregister":
      return outcome(t.unregister(op.workerId, now));
    case "add":
      return outcome(t.add(op.input, now));
    case "prefillComplete":
      return outcome(t.prefillComplete(op.requestId, now));
    case "free":
      return outcome(t.free(op.requestId, now));
    case "advance":
      return op.sweep ? t.expire(now) : 0;
  }
}

/** Everything a client can observe at `now`, in one comparable value. */
function observe(t: Tracker | TrackerModel, queries: [BigUint64Array, number][], now: number) {
  return {
    workers: t.listWorkers(now),
    loads: t.listLoads(now),
    potential: queries.map(([q, tokens]) => {
      const r = t.potentialLoads(q, tokens, now);
      return r.ok && "loads" in r ? r.loads : outcome(r);
    }),
    live: t.liveRequests,
    nextDeadline: t.nextDeadline(),
  };
}

it("behaves like the plain model after every operation, and a rebuild from its store agrees", () => {
  fc.assert(
    fc.property(opsArb, queriesArb, (ops, queries) => {
      const store = new RecordingStore();
      const real = tracker({ expiryMs: EXPIRY_MS, limits: LIMITS, store });
      const model = new TrackerModel(EXPIRY_MS, LIMITS);
      let now = T0;
      for (const [i, drawn] of ops.entries()) {
        const op = aim(drawn, model.ranks());
        if (op.op === "advance") now += op.ms;
        expect(apply(real, op, now), `op ${i} result`).toEqual(apply(model, op, now));
        const seen = observe(real, queries, now);
        expect(seen, `op ${i} state`).toEqual(observe(model, queries, now));
        const restored = store.rebuild({ expiryMs: EXPIRY_MS, limits: LIMITS });
        expect(observe(restored, queries, now), `op ${i} restored`).toEqual(seen);
      }
      const restored = store.rebuild({ expiryMs: EXPIRY_MS, limits: LIMITS });
      for (const later of [now + 1, now + 2_500, now + EXPIRY_MS, now + EXPIRY_MS + 1, now + 30_000]) {
        const expected = observe(model, queries, later);
        expect(observe(real, queries, later), `at +${later - now} ms`).toEqual(expected);
        expect(observe(restored, queries, later), `restored at +${later - now} ms`).toEqual(expected);
      }
    }),
    { numRuns: 300 },
  );
}, 120_000);
