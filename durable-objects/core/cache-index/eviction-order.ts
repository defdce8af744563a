/**
 * Which entries of one deadline group the cap drops first when it drops only some: the deepest
 * position first (Dynamo's older size pruning: a rank keeps its prefix, which is what overlap counts),
 * then by worker, dp_rank, sequence hash, local hash and parent hash, ascending. Every part of an
 * entry's identity takes part, so the order is total and independent of arrival order: together with
 * "earliest deadline first" it makes the entries kept at the cap the same on every replica, whatever
 * order the bookings arrived in.
 */
import { NONE } from "./arrays";
import type { BlockTable } from "./block-table";
import type { EntryStore } from "./entry-store";
import { compareRanks, type RankTable } from "./rank-table";

/** The entries of the group list starting at `head`, in the order the cap drops them. */
export function evictionOrder(
  entries: EntryStore,
  blocks: BlockTable,
  ranks: RankTable,
  head: number,
): number[] {
  const order = (x: number, y: number) => {
    const bx = entries.block(x);
    const by = entries.block(y);
    const depth = blocks.position(by) - blocks.position(bx);
    if (depth !== 0) return depth;
    const rank = compareRanks(ranks, entries.rank(x), entries.rank(y));
    return rank !== 0 ? rank : blocks.compareHashes(bx, by);
  };
  const list: number[] = [];
  let sorted = true;
  for (let e = head; e !== NONE; e = entries.nextOfGroup(e)) {
    if (sorted && list.length > 0 && order(list[list.length - 1]!, e) > 0) sorted = false;
    list.push(e);
  }
  // A group is usually one recording, linked first to last, so its list is the order already.
  return sorted ? list : list.sort(order);
}
