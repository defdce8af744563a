import fc from "fast-check";
import { expect, it } from "vitest";
import { NONE } from "../../durable-objects/core/cache-index/arrays";
import { BlockTable } from "../../durable-objects/core/cache-index/block-table";
import { DeadlineGroups } from "../../durable-objects/core/cache-index/deadline-groups";
import { EntryStore } from "../../durable-objects/core/cache-index/entry-store";
import { RankTable } from "../../durable-objects/core/cache-index/rank-table";

/**
 * The entry store against a map of (block, rank) → deadline, driven directly: entries added, moved,
 * removed one by one and drained a deadline at a time, the block table's releases settled at random
 * points (`BlockTable.settle`), over few blocks and ranks so that blocks
 * gain and lose holders all the time, with filing thresholds low enough to cross both ways. The
 * (block, rank) set must hold exactly the entries of the blocks whose holders reached the filing
 * threshold and have not fallen to the unfiling one since, and `find` must answer from the set or
 * from the block's list alike.
 */

const BLOCKS = 4;
const RANKS = 4;
const DEADLINES = [100, 200, 300];

type Op =
  | { op: "record"; block: number; rank: number; deadline: number }
  | { op: "remove"; block: number; rank: number }
  | { op: "drain"; deadline: number }
  | { op: "settle" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant("record" as const),
      block: fc.nat({ max: BLOCKS - 1 }),
      rank: fc.nat({ max: RANKS - 1 }),
      deadline: fc.constantFrom(...DEADLINES),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("remove" as const),
      block: fc.nat({ max: BLOCKS - 1 }),
      rank: fc.nat({ max: RANKS - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("drain" as const), deadline: fc.constantFrom(...DEADLINES) }),
  },
  // Released blocks leave the block table here; until then their stale slots must match nothing.
  { weight: 1, arbitrary: fc.constant({ op: "settle" as const }) },
);

/** Block `k` of the test: position 0 of a one-block prompt whose hash is `k + 1`. */
const blockWords = Array.from({ length: BLOCKS }, (_, k) => Int32Array.of(k + 1, 0));

/** (file at, unfile at): the smallest allowed, one with a gap, and one where no block of 4 ranks files. */
const THRESHOLDS: [number, number][] = [
  [2, 1],
  [3, 1],
  [4, 2],
  [5, 2],
];

it.each(THRESHOLDS)(
  "finds every entry and files exactly the blocks' holders due (file at %i, unfile at %i)",
  (fileAt, unfileAt) => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 120, size: "max" }), (ops) => {
        const blocks = new BlockTable(1, 16, false);
        const ranks = new RankTable(4);
        const groups = new DeadlineGroups(4);
        const entries = new EntryStore(blocks, ranks, groups, 2, 16, fileAt, unfileAt);
        const model = new Map<string, number>();
        /** Blocks whose holders the store must have filed (hysteresis: what the counts went through). */
        const filed = new Set<number>();
        const key = (block: number, rank: number) => `${block}/${rank}`;
        const blockOf = (k: number) => blocks.find(blockWords[k]!, blockWords[k]!, 0);
        const entryOf = (block: number, rank: number) => {
          const b = blockOf(block);
          const r = ranks.idOf(BigInt(rank), 0);
          return b === NONE || r === NONE ? NONE : entries.find(b, r);
        };
        for (const step of ops) {
          if (step.op === "record") {
            const b = blocks.intern(blockWords[step.block]!, blockWords[step.block]!, 0);
            const r = ranks.intern(BigInt(step.rank), 0);
            const g = groups.intern(step.deadline);
            const e = entries.find(b, r);
            if (e === NONE) entries.add(b, r, g);
            else if (groups.deadline[entries.group(e)]! < step.deadline) entries.moveTo(e, g);
            if (groups.count[g] === 0) groups.release(g);
            model.set(
              key(step.block, step.rank),
              Math.max(step.deadline, model.get(key(step.block, step.rank)) ?? 0),
            );
          } else if (step.op === "remove") {
            const e = entryOf(step.block, step.rank);
            expect(e !== NONE).toBe(model.has(key(step.block, step.rank)));
            if (e !== NONE) entries.remove(e);
            model.delete(key(step.block, step.rank));
          } else if (step.op === "settle") {
            blocks.settle();
          } else {
            const g = groups.intern(step.deadline);
            if (groups.count[g] === 0) groups.release(g);
            else entries.drain(g);
            for (const [k, deadline] of model) if (deadline === step.deadline) model.delete(k);
          }
          const holders = new Map<number, number>();
          for (const k of model.keys()) {
            const block = Number(k.split("/")[0]);
            holders.set(block, (holders.get(block) ?? 0) + 1);
          }
          // One step adds or removes one holder at most, except a drain, which walks down one at a time.
          for (let block = 0; block < BLOCKS; block++) {
            const n = holders.get(block) ?? 0;
            if (n >= fileAt) filed.add(block);
            else if (n <= unfileAt) filed.delete(block);
          }
          // One comparison per step: what the store answers against what the map says.
          const seen: (number | null)[] = [];
          const expected: (number | null)[] = [];
          for (let block = 0; block < BLOCKS; block++) {
            for (let rank = 0; rank < RANKS; rank++) {
              const e = entryOf(block, rank);
              seen.push(
                e === NONE || entries.rank(e) !== ranks.idOf(BigInt(rank), 0)
                  ? null
                  : groups.deadline[entries.group(e)]!,
              );
              expected.push(model.get(key(block, rank)) ?? null);
            }
          }
          const shared = [...filed].reduce((sum, block) => sum + (holders.get(block) ?? 0), 0);
          expect({ seen, shared: entries.sharedEntries, entries: entries.size, blocks: blocks.size }).toEqual(
            {
              seen: expected,
              shared,
              entries: model.size,
              blocks: holders.size,
            },
          );
        }
      }),
      { numRuns: 200 },
    );
  },
);
