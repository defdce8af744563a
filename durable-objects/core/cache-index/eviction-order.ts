/**
 * Which entries of one deadline group the cap drops first when it drops only some: the deepest
 * position first (Dynamo's older size pruning: a rank keeps its prefix, which is what overlap counts),
 * then by worker, dp_rank, sequence hash, local hash and parent hash, ascending. Every part of an
 * entry's identity takes part, so the order is total and independent of arrival order: together with
 * "earliest deadline first" it makes the entries kept at the cap the same on every replica, whatever
 * order the bookings arrived in.
 *
 * A group's list is usually in this order already: entries join at its head, and a recording joins
 * its prompt's blocks shallowest first, so one recording's list runs deepest first. The entry store
 * marks a group whose list a join put out of order (`DeadlineGroups.unordered`), and only such a
 * group is sorted, once (`EntryStore.relinkGroup`); the cap then drops from the head of the list.
 */
import { NONE } from "./arrays";
import type { BlockTable } from "./block-table";
import type { EntryStore } from "./entry-store";
import { compareRanks, type RankTable } from "./rank-table";

/** Negative when entry `x` goes before entry `y`; never 0 for two entries of one group. */
export function compareEviction(
  entries: EntryStore,
  blocks: BlockTable,
  ranks: RankTable,
  x: number,
  y: number,
): number {
  const bx = entries.block(x);
  const by = entries.block(y);
  const depth = blocks.position(by) - blocks.position(bx);
  if (depth !== 0) return depth;
  const rank = compareRanks(ranks, entries.rank(x), entries.rank(y));
  return rank !== 0 ? rank : blocks.compareHashes(bx, by);
}

/** The entries of the group list starting at `head`, in the order the cap drops them. */
export function evictionOrder(
  entries: EntryStore,
  blocks: BlockTable,
  ranks: RankTable,
  head: number,
): number[] {
  const list: number[] = [];
  for (let e = head; e !== NONE; e = entries.nextOfGroup(e)) list.push(e);
  return list.sort((x, y) => compareEviction(entries, blocks, ranks, x, y));
}
