/**
 * A rank's holdings read back out of the event index: as Stored runs that rebuild them
 * (`holdingsOf`, for checkpoints and replica snapshots), and as `/dump`'s Dynamo RouterEvents.
 *
 * Runs: the rank's tree is cut into chains, each from an entry down through first children; a run
 * is a stretch of one chain in one tier whose entries share one age, so applying it with that age
 * as `at` gives them that age back (`applyStored` keeps the later of an entry's age and `at`). An
 * entry held in two tiers is in a run of each. A chain's runs come out in the order they start, so
 * a run's parent is held by the time it is applied: it is in an earlier run of the chain, or in the
 * chain above, whose runs all came out before this chain began. Cost O(entries) with no map.
 */
import { NONE } from "./arrays";
import type { RouterEvent, StorageTier } from "./cache-index";
import { ENTRY_WORDS, LOCAL } from "./event-entries";
import type { EventTree } from "./event-tree";
import { dumpEvents } from "./index-dump";

export const TIERS: readonly StorageTier[] = ["device", "host_pinned", "disk", "external"];

/** One run of a rank's holdings: `applyStored` it (with `at`) to rebuild them. */
export interface KvHeldRun {
  tier: StorageTier;
  engineHashes: BigUint64Array;
  /** The engine hash of the block before the first one, which an earlier run holds; null at the root. */
  parent: bigint | null;
  localHashes: BigUint64Array;
  /** The age of every block of the run (epoch ms, as `applyStored`'s `at`). */
  at: number;
}

/** A run being gathered: the entries' engine and local hash words, low word first. */
interface OpenRun {
  tier: number;
  parent: bigint | null;
  at: number;
  engine: number[];
  local: number[];
}

/** Rank `r`'s holdings as runs; the index must not change while they are read. */
export function* heldRuns(tree: EventTree, r: number): Generator<KvHeldRun> {
  const { entries } = tree;
  const w = entries.words;
  const stack: number[] = [];
  for (let e = tree.ranks.head[r]!; e !== NONE; e = entries.nextSibling(e)) stack.push(e, NONE);
  const open: (OpenRun | null)[] = [null, null, null, null];
  while (stack.length > 0) {
    const above = stack.pop()!;
    const start = stack.pop()!;
    const pending: OpenRun[] = [];
    let prev = above;
    for (let x = start; x !== NONE; prev = x, x = entries.firstChild(x)) {
      const tiers = entries.tiers(x);
      const age = tree.ageOf(x);
      const o = x * ENTRY_WORDS;
      for (let t = 0; t < TIERS.length; t++) {
        if ((tiers & (1 << t)) === 0) {
          open[t] = null;
          continue;
        }
        let run = open[t];
        if (!run || run.at !== age) {
          run = {
            tier: t,
            parent: prev === NONE ? null : entries.engineHash(prev),
            at: age,
            engine: [],
            local: [],
          };
          open[t] = run;
          pending.push(run);
        }
        run.engine.push(w[o + 1]!, w[o + 2]!);
        run.local.push(w[o + LOCAL]!, w[o + LOCAL + 1]!);
      }
      const first = entries.firstChild(x);
      if (first !== NONE)
        for (let c = entries.nextSibling(first); c !== NONE; c = entries.nextSibling(c)) stack.push(c, x);
    }
    open.fill(null);
    for (const run of pending) yield heldRunOf(run);
  }
}

function heldRunOf(run: OpenRun): KvHeldRun {
  const engineHashes = new BigUint64Array(run.engine.length / 2);
  new Int32Array(engineHashes.buffer).set(run.engine);
  const localHashes = new BigUint64Array(run.local.length / 2);
  new Int32Array(localHashes.buffer).set(run.local);
  return { tier: TIERS[run.tier]!, engineHashes, parent: run.parent, localHashes, at: run.at };
}

/**
 * Rank `r`'s holdings as Dynamo RouterEvents (`index-dump.ts`): per tier, in `TIERS` order, its
 * chains of blocks in that tier, `block_hash` the engine's hash and `tokens_hash` the local one. A
 * stretch in a lower tier below a device block starts with that block as its `parent_hash`, as a
 * lower tier continues the device run in Dynamo. Event ids are the caller's to renumber.
 */
export function rankDump(tree: EventTree, r: number): RouterEvent[] {
  const { entries, ranks } = tree;
  const info = new Map<number, { depth: number; parent: bigint; local: bigint }>();
  const held: number[][] = TIERS.map(() => []);
  const stack: number[] = [];
  for (let e = ranks.head[r]!; e !== NONE; e = entries.nextSibling(e)) stack.push(e, NONE, 0);
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const parent = stack.pop()!;
    const e = stack.pop()!;
    const local = entries.localHash(e);
    info.set(e, { depth, parent: parent === NONE ? 0n : entries.engineHash(parent), local });
    for (let t = 0; t < TIERS.length; t++) if (entries.tiers(e) & (1 << t)) held[t]!.push(e);
    for (let c = entries.firstChild(e); c !== NONE; c = entries.nextSibling(c)) stack.push(c, e, depth + 1);
  }
  const workerId = ranks.workerOf[r]!;
  const dpRank = ranks.dpRankOf[r]!;
  return TIERS.flatMap((tier, t) => {
    if (held[t]!.length === 0) return [];
    const source = {
      ranks: () => [{ workerId, dpRank, blocks: held[t]! }],
      position: (b: number) => info.get(b)!.depth,
      sequenceHash: (b: number) => entries.engineHash(b),
      localHash: (b: number) => info.get(b)!.local,
      parentHash: (b: number) => info.get(b)!.parent,
    };
    return dumpEvents(source, tier);
  });
}
