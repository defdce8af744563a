import fc from "fast-check";
import { sequenceHashes } from "../../durable-objects/core/hashing/sequence-hashes";
import { describe, expect, it } from "vitest";
import type { StorageTier } from "../../durable-objects/core/cache-index/cache-index";
import { EventIndex } from "../../durable-objects/core/cache-index/event-index";
import type { KvRemovedOp, KvStoredOp } from "../../durable-objects/kv-event-types";
import { dumpKeys, EventIndexModel, runKeys, storedOp, TIERS } from "./event-index-model";

/**
 * The event index against the plain model (`event-index-model.ts`), over event sequences drawn
 * from small alphabets so that the rare cases are common: the same engine hash on several ranks and
 * at several places (moves, runs that name their own chain), parents held and not, one block in
 * several tiers, tokens shared across ranks under other engine hashes, ages on a coarse grid (so
 * the cap's ties decide), and caps small enough to evict on most runs. Tables start at their
 * smallest, so they grow throughout. Then the same indexes read back through `holdingsOf` and
 * rebuilt: holdings, tiers, ages, overlap and dump must come back alike.
 */

const U64_MAX = 2n ** 64n - 1n;
const WORKERS = [1n, 2n ** 63n, U64_MAX];
const RANKS = [0, 1, 2 ** 32 - 1];
const workerId = fc.constantFrom(...WORKERS);
const dpRank = fc.constantFrom(...RANKS);
const engineHash = fc.constantFrom(1n, 2n, 3n, 4n, 5n, 6n, 7n, U64_MAX);
const localHash = fc.constantFrom(1n, 2n, 3n, U64_MAX);
const tier = fc.constantFrom<StorageTier>(...TIERS);

type Op =
  | { op: "stored"; workerId: bigint; dpRank: number; stored: KvStoredOp; at: number }
  | { op: "removed"; workerId: bigint; dpRank: number; removed: KvRemovedOp }
  | { op: "clearRank" | "removeRank"; workerId: bigint; dpRank: number }
  | { op: "removeWorker"; workerId: bigint }
  | { op: "query"; locals: BigUint64Array };

const storedArb = fc
  .record({
    tier,
    parent: fc.option(engineHash, { freq: 2 }),
    blocks: fc.array(fc.tuple(engineHash, localHash), { maxLength: 5 }),
  })
  .map(({ tier, parent, blocks }) =>
    storedOp({
      tier,
      parent,
      engineHashes: BigUint64Array.from(blocks.map(([e]) => e)),
      localHashes: BigUint64Array.from(blocks.map(([, l]) => l)),
    }),
  );

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant("stored" as const),
      workerId,
      dpRank,
      stored: storedArb,
      at: fc.nat({ max: 8 }).map((k) => 1_000 + k * 100),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("removed" as const),
      workerId,
      dpRank,
      removed: fc
        .record({ tier, hashes: fc.array(engineHash, { maxLength: 3 }) })
        .map(({ tier, hashes }) => ({
          kind: "removed" as const,
          tier,
          engineHashes: BigUint64Array.from(hashes),
        })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constantFrom("clearRank" as const, "removeRank" as const),
      workerId,
      dpRank,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("removeWorker" as const), workerId }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("query" as const),
      locals: fc.array(localHash, { maxLength: 6 }).map((ls) => BigUint64Array.from(ls)),
    }),
  },
);

const capArb = fc.constantFrom(2, 5, 12, 10_000);

/** A query as the selection API makes one: its local hashes and their public chain. */
const query = (locals: BigUint64Array) => ({
  localHashes: locals,
  sequenceHashes: sequenceHashes(locals),
});

function counters(ix: EventIndex) {
  const { entries, blocks, ranks, evicted } = ix.stats();
  return { entries, blocks, ranks, evicted };
}

/** Applies `ops` to both, comparing every answer; returns the index. */
function replay(ops: Op[], cap: number, seed: number, model: EventIndexModel): EventIndex {
  const ix = new EventIndex({ maxEntries: cap, seed, initialEntries: 16 });
  for (const step of ops) {
    switch (step.op) {
      case "stored":
        expect(ix.applyStored(step.workerId, step.dpRank, step.stored, step.at)).toEqual(
          model.applyStored(step.workerId, step.dpRank, step.stored, step.at),
        );
        break;
      case "removed":
        expect(ix.applyRemoved(step.workerId, step.dpRank, step.removed)).toBe(
          model.applyRemoved(step.workerId, step.dpRank, step.removed),
        );
        break;
      case "clearRank":
        expect(ix.clearRank(step.workerId, step.dpRank)).toBe(model.removeRank(step.workerId, step.dpRank));
        break;
      case "removeRank":
        expect(ix.removeRank(step.workerId, step.dpRank)).toBe(model.removeRank(step.workerId, step.dpRank));
        break;
      case "removeWorker":
        expect(ix.removeWorker(step.workerId)).toBe(model.removeWorker(step.workerId));
        break;
      case "query":
        expect(ix.overlap(query(step.locals), 0)).toEqual(model.overlap(step.locals));
        break;
    }
    expect(counters(ix)).toEqual(model.stats());
    expect(ix.stats().entries).toBeLessThanOrEqual(cap);
  }
  return ix;
}

/** Every path the model holds, as a query. */
function heldPaths(model: EventIndexModel): BigUint64Array[] {
  return [...model.ranks.values()].flatMap((r) =>
    [...r.entries.values()].map((e) => BigUint64Array.from(e.locals)),
  );
}

describe("event cache index, property", () => {
  it("answers every event and query as the plain model does", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 80, size: "medium" }),
        capArb,
        fc.integer(),
        (ops, cap, seed) => {
          const model = new EventIndexModel(cap);
          const ix = replay(ops, cap, seed, model);
          for (const locals of heldPaths(model))
            expect(ix.overlap(query(locals), 0)).toEqual(model.overlap(locals));
          expect(ix.ranksHeld()).toEqual(
            model.sortedRanks().map(({ workerId, dpRank }) => ({ workerId, dpRank })),
          );
          for (const r of model.ranks.values()) {
            expect(ix.rankEntries(r.workerId, r.dpRank)).toBe(r.entries.size);
          }
          expect(dumpKeys(ix.dump()).sort()).toEqual(model.heldKeys());
          const ages = ix
            .ranksHeld()
            .flatMap(({ workerId, dpRank }) => runKeys(workerId, dpRank, ix.holdingsOf(workerId, dpRank)));
          expect(ages.sort()).toEqual(model.ageKeys());
        },
      ),
      { numRuns: 300 },
    );
  });

  it("rebuilds from holdingsOf the same holdings, tiers, ages, overlap, dump and sizes", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 80, size: "medium" }),
        capArb,
        fc.integer(),
        fc.integer(),
        (ops, cap, seedA, seedB) => {
          const model = new EventIndexModel(cap);
          const a = replay(ops, cap, seedA, model);
          const b = new EventIndex({ maxEntries: cap, seed: seedB, initialEntries: 16 });
          for (const { workerId, dpRank } of a.ranksHeld()) {
            for (const run of a.holdingsOf(workerId, dpRank)) {
              expect(b.applyStored(workerId, dpRank, storedOp(run), run.at)).toEqual({
                stored: run.engineHashes.length,
                orphaned: 0,
                evicted: 0,
              });
            }
          }
          expect(b.dump()).toEqual(a.dump());
          const { evicted: _, ...sizes } = counters(a);
          expect(counters(b)).toEqual({ ...sizes, evicted: 0 });
          expect(b.ranksHeld()).toEqual(a.ranksHeld());
          const agesOf = (ix: EventIndex) =>
            ix
              .ranksHeld()
              .flatMap(({ workerId, dpRank }) => runKeys(workerId, dpRank, ix.holdingsOf(workerId, dpRank)))
              .sort();
          expect(agesOf(b)).toEqual(agesOf(a));
          for (const locals of heldPaths(model))
            expect(b.overlap(query(locals), 0)).toEqual(a.overlap(query(locals), 0));
        },
      ),
      { numRuns: 200 },
    );
  });
});
