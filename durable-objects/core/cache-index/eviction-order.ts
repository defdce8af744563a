/**
 * Which entries of one deadline group the cap drops first when it drops only some: the deepest
 * position first (Dynamo's older size pruning: a rank keeps its prefix, which is what overlap counts),
 * then by worker, dp_rank, sequence hash, local hash and parent hash, ascending. Every part of an
 * entry's identity takes part, so the order is total and independent of arrival order: together with
 * "earliest deadline first" it makes the entries kept at the cap the same on every replica, whatever
 * order the bookings arrived in.
 */
import { BLOCK_WORDS, type BlockTable } from "./block-table";
import type { EntryStore } from "./entry-store";
import { NONE } from "./links";
import { compareRanks, type RankTable } from "./rank-table";

/** The entries of group `head`'s list, in the order the cap drops them. */
export function evictionOrder(
  entries: EntryStore,
  blocks: BlockTable,
  ranks: RankTable,
  head: number,
): number[] {
  const list: number[] = [];
  for (let e = head; e !== NONE; e = entries.byGroup.next[e]!) list.push(e);
  return list.sort((x, y) => {
    const bx = entries.block[x]!;
    const by = entries.block[y]!;
    const depth = blocks.position[by]! - blocks.position[bx]!;
    if (depth !== 0) return depth;
    const rank = compareRanks(ranks, entries.rank[x]!, entries.rank[y]!);
    return rank !== 0 ? rank : compareKeys(blocks.words, bx, by);
  });
}

/** Compares two blocks' (sequence, local, parent) hashes as u64s, in that order. */
function compareKeys(words: Uint32Array, a: number, b: number): number {
  const oa = a * BLOCK_WORDS;
  const ob = b * BLOCK_WORDS;
  for (let k = 0; k < BLOCK_WORDS; k += 2) {
    const hi = words[oa + k + 1]! - words[ob + k + 1]!;
    if (hi !== 0) return hi;
    const lo = words[oa + k]! - words[ob + k]!;
    if (lo !== 0) return lo;
  }
  return 0;
}
