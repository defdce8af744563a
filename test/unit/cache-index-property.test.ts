import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApproximateIndex } from "../../durable-objects/core/cache-index/approximate-index";
import type { PromptBlocks } from "../../durable-objects/core/cache-index/cache-index";
import { CacheIndexModel, keysOfDump, prompt, raw, U32_MAX, U64_MAX } from "./cache-index-model";

/**
 * The approximate index against the plain model, over operation sequences drawn from small alphabets
 * so that collisions are the rule: shared prefixes, one block on many ranks, inconsistent trusted
 * hashes, origin times before the latest expiry, renewals, and caps small enough to evict on most
 * recordings. Times sit on a coarse grid, so that bookings often share a deadline and the cap's
 * tie rules decide. Tables start at their smallest, so they grow throughout.
 */

const TTL = 1_000;
const WORKERS = [1n, 2n ** 63n, U64_MAX];
const RANKS = [0, 1, U32_MAX];
const hash = fc.constantFrom(0n, 1n, 2n, 3n, U64_MAX);
/** Prompts of a few families, which share prefixes: the same blocks then sit on many ranks. */
const FAMILIES = [
  [1n, 2n, 3n, 4n, 5n, 6n],
  [1n, 2n, 3n, 7n, 8n],
  [9n, 2n, 3n],
];
const promptArb: fc.Arbitrary<PromptBlocks> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...FAMILIES), fc.nat({ max: 6 }))
      .map(([family, length]) => prompt(...family.slice(0, length))),
  },
  { weight: 2, arbitrary: fc.array(hash, { maxLength: 6 }).map((ls) => prompt(...ls)) },
  {
    weight: 1,
    arbitrary: fc.array(fc.tuple(hash, hash), { maxLength: 5 }).map((pairs) =>
      raw(
        pairs.map(([l]) => l),
        pairs.map(([, s]) => s),
      ),
    ),
  },
);
const workerId = fc.constantFrom(...WORKERS);
const dpRank = fc.constantFrom(...RANKS);

type Op =
  | { op: "record"; workerId: bigint; dpRank: number; prompt: PromptBlocks; offset: number }
  | { op: "advance"; ms: number }
  | { op: "expire" }
  | { op: "removeWorker"; workerId: bigint }
  | { op: "removeRank"; workerId: bigint; dpRank: number }
  | { op: "query"; prompt: PromptBlocks };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("record" as const),
      workerId,
      dpRank,
      prompt: promptArb,
      offset: fc.integer({ min: -15, max: 2 }).map((k) => k * 100),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.nat({ max: 30 }).map((k) => k * 50) }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("expire" as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("removeWorker" as const), workerId }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("removeRank" as const), workerId, dpRank }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("query" as const), prompt: promptArb }) },
);

const capArb = fc.constantFrom(2, 5, 12, 10_000);

function withoutMemory(ix: ApproximateIndex) {
  const { memoryBytes: _, maxEntries: __, ...rest } = ix.stats();
  return rest;
}

describe("approximate cache index, property", () => {
  it("answers every call as the plain model does", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 80, size: "medium" }),
        capArb,
        fc.integer(),
        (ops, cap, seed) => {
          const ix = new ApproximateIndex({ ttlMs: TTL, maxEntries: cap, seed, initialEntries: 16 });
          const model = new CacheIndexModel(TTL, cap);
          const prompts: PromptBlocks[] = [];
          let now = 10_000;
          for (const step of ops) {
            switch (step.op) {
              case "record": {
                const at = now + step.offset;
                prompts.push(step.prompt);
                expect(ix.recordBooking(step.workerId, step.dpRank, step.prompt, at)).toBe(
                  model.recordBooking(step.workerId, step.dpRank, step.prompt, at),
                );
                break;
              }
              case "advance":
                now += step.ms;
                break;
              case "expire":
                expect(ix.expire(now)).toBe(model.expire(now));
                break;
              case "removeWorker":
                expect(ix.removeWorker(step.workerId)).toBe(model.removeWorker(step.workerId));
                break;
              case "removeRank":
                expect(ix.removeRank(step.workerId, step.dpRank)).toBe(
                  model.removeRank(step.workerId, step.dpRank),
                );
                break;
              case "query":
                expect(ix.overlap(step.prompt, now)).toEqual(model.overlap(step.prompt, now));
                break;
            }
            expect(ix.nextDeadline()).toBe(model.nextDeadline());
            expect(withoutMemory(ix)).toEqual(model.stats());
          }
          for (const p of prompts) expect(ix.overlap(p, now)).toEqual(model.overlap(p, now));
          const dumped = keysOfDump(ix.dump());
          expect(new Set(dumped).size).toBe(dumped.length);
          expect(dumped.sort()).toEqual([...model.entries.keys()].sort());
        },
      ),
      { numRuns: 200 },
    );
  });

  it("converges: the same bookings and expiries in any order leave the same index", () => {
    type Event =
      | { op: "record"; workerId: bigint; dpRank: number; prompt: PromptBlocks; at: number }
      | { op: "expire"; now: number };
    const eventArb: fc.Arbitrary<Event> = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          op: fc.constant("record" as const),
          workerId,
          dpRank,
          prompt: promptArb,
          at: fc.nat({ max: 30 }).map((k) => k * 100),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({ op: fc.constant("expire" as const), now: fc.nat({ max: 3_000 }) }),
      },
    );
    const orders = fc
      .array(eventArb, { maxLength: 60, size: "medium" })
      .chain((events) =>
        fc.tuple(
          fc.constant(events),
          fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }),
        ),
      );
    fc.assert(
      fc.property(orders, capArb, fc.integer(), fc.integer(), ([first, second], cap, seedA, seedB) => {
        const replay = (events: Event[], seed: number) => {
          const ix = new ApproximateIndex({ ttlMs: TTL, maxEntries: cap, seed, initialEntries: 16 });
          for (const e of events) {
            if (e.op === "record") ix.recordBooking(e.workerId, e.dpRank, e.prompt, e.at);
            else ix.expire(e.now);
          }
          return ix;
        };
        const a = replay(first, seedA);
        const b = replay(second, seedB);
        expect(a.dump()).toEqual(b.dump());
        expect(a.nextDeadline()).toBe(b.nextDeadline());
        const { entries, blocks, ranks } = a.stats();
        expect(b.stats()).toMatchObject({ entries, blocks, ranks });
        for (const e of first) {
          if (e.op !== "record") continue;
          for (const now of [0, 1_500, 3_000])
            expect(a.overlap(e.prompt, now)).toEqual(b.overlap(e.prompt, now));
        }
      }),
      { numRuns: 200 },
    );
  });
});
