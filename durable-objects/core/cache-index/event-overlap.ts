/**
 * The event index's overlap walk (reference selection §4.1, §8): each query block is looked up by
 * its public sequence hash, its node's name (`path-hash.ts`), as Dynamo's radix tree walks children
 * by local hash from the root, and at each node the holders' lists say which ranks hold it and in
 * which tiers. So ranks that stored the same tokens meet at one node whatever their engine hashes,
 * and a `/route` prompt, known by its sequence hashes alone, meets them too.
 *
 * A rank's tiers are exclusive continuations of one leading run (`RankOverlap`): device from block
 * 0, then host-pinned from where the device run stopped, then disk, then external; a block counts
 * in the first tier, in that order, that continues the run, and a tier once left is not taken up
 * again. That is Dynamo's `query_lower_tiers`, which seeds each lower tier from where the one above
 * it stopped. A rank holding a node under two engine hashes (tokens that hash alike, blocks that
 * differ) holds the union of their tiers there.
 *
 * Cost: per query block one path step and one step per holder of the node. The node is found from
 * the previous node's holder's first child when that is it (a chain the engine stored in one run,
 * whose records are adjacent), else by the path table: so a walk along a stored prompt reads its
 * records nearly in order, and the index's size shows only in the probes where chains branch.
 */
import { NONE } from "./arrays";
import type { RankOverlap } from "./cache-index";
import { ENTRY_WORDS, FIRST_CHILD, META, NEXT_HOLDER, PATH, RANK_MASK, TIER_SHIFT } from "./event-entries";
import type { EventTree } from "./event-tree";
import { compareRanks } from "./rank-table";

/** Tiers in continuation order; bit `1 << k` of an entry's tiers is `TIERS[k]`. */
const TIER_COUNT = 4;

export class OverlapWalk {
  /** Per rank: blocks matched so far (0 outside a query). */
  private reached = new Int32Array(64);
  /** Per rank: the tier its run is in now. */
  private phase = new Int32Array(64);
  /** Per rank, per tier: blocks counted. */
  private counts = new Int32Array(64 * TIER_COUNT);
  /** Per rank: tiers it holds the current block in (0 between blocks). */
  private held = new Int32Array(64);
  private touched = new Int32Array(64);
  private started = new Int32Array(64);

  constructor(private readonly tree: EventTree) {}

  run(sequenceHashes: BigUint64Array): RankOverlap[] {
    const n = sequenceHashes.length;
    if (n === 0) return [];
    const paths = new Int32Array(sequenceHashes.buffer, sequenceHashes.byteOffset, n * 2);
    const { tree } = this;
    const ranks = tree.ranks;
    if (this.reached.length < ranks.capacity) this.resize(ranks.capacity);
    const { reached, phase, counts, held, touched, started } = this;
    const w = tree.entries.words;
    const lookups = tree.lookups;
    let count = 0;
    let pathLo = 0;
    let pathHi = 0;
    /** A holder at the last node of a rank still matching: its first child is likely the next node. */
    let hint = NONE;
    for (let i = 0; i < n; i++) {
      pathLo = paths[2 * i]!;
      pathHi = paths[2 * i + 1]!;
      let first = hint === NONE ? NONE : w[hint * ENTRY_WORDS + FIRST_CHILD]!;
      if (
        first === NONE ||
        w[first * ENTRY_WORDS + PATH] !== pathLo ||
        w[first * ENTRY_WORDS + PATH + 1] !== pathHi
      ) {
        first = lookups.findNode(pathLo, pathHi);
        if (first === NONE) break;
      }
      let t = 0;
      let e = first;
      do {
        const meta = w[e * ENTRY_WORDS + META]!;
        const r = meta & RANK_MASK;
        // A rank continues only if it held every block before this one.
        if (reached[r] === i) {
          if (held[r] === 0) touched[t++] = r;
          held[r] = held[r]! | (meta >>> TIER_SHIFT);
          hint = e;
        }
        e = w[e * ENTRY_WORDS + NEXT_HOLDER]!;
      } while (e !== first);
      let advanced = false;
      for (let k = 0; k < t; k++) {
        const r = touched[k]!;
        const tiers = held[r]!;
        held[r] = 0;
        let p = i === 0 ? 0 : phase[r]!;
        while (p < TIER_COUNT && (tiers & (1 << p)) === 0) p++;
        if (i === 0) {
          started[count++] = r;
          for (let q = 0; q < TIER_COUNT; q++) counts[r * TIER_COUNT + q] = 0;
        }
        if (p === TIER_COUNT) continue;
        phase[r] = p;
        counts[r * TIER_COUNT + p]!++;
        reached[r] = i + 1;
        advanced = true;
      }
      if (!advanced) break;
    }
    const ids = Array.from(started.subarray(0, count)).sort((a, b) => compareRanks(ranks, a, b));
    return ids.map((r) => {
      reached[r] = 0;
      const c = r * TIER_COUNT;
      return {
        workerId: ranks.workerOf[r]!,
        dpRank: ranks.dpRankOf[r]!,
        deviceBlocks: counts[c]!,
        hostPinnedBlocks: counts[c + 1]!,
        diskBlocks: counts[c + 2]!,
        externalBlocks: counts[c + 3]!,
      };
    });
  }

  private resize(capacity: number): void {
    this.reached = new Int32Array(capacity);
    this.phase = new Int32Array(capacity);
    this.counts = new Int32Array(capacity * TIER_COUNT);
    this.held = new Int32Array(capacity);
    this.touched = new Int32Array(capacity);
    this.started = new Int32Array(capacity);
  }
}
