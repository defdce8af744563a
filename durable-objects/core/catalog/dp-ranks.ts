/**
 * A record's data-parallel ranks. Dynamo reads an absent start as 0 and an absent size as 1, and
 * forms the range with a saturating add (`start..start.saturating_add(size)`), so a range past
 * u32 is cut at 2^32 − 1 rather than refused: the catalog never answers "dp range overflows".
 */
import type { CatalogFields } from "./catalog-record";

const U32_MAX = 0xffff_ffff;
const NO_RANKS: RankRange = { start: 0, end: 0 };

/** Global DP ranks `start ..< end` (u32 bounds, `start ≤ end`). */
export interface RankRange {
  readonly start: number;
  readonly end: number;
}

type RankFields = Pick<CatalogFields, "dpStart" | "dpSize">;

export function dpStartOf(record: RankFields): number {
  return record.dpStart ?? 0;
}

export function dpSizeOf(record: RankFields): number {
  return record.dpSize ?? 1;
}

export function dpRanks(record: RankFields): RankRange {
  const start = dpStartOf(record);
  return { start, end: Math.min(start + dpSizeOf(record), U32_MAX) };
}

export function rankCount(range: RankRange): number {
  return range.end - range.start;
}

export function hasRank(range: RankRange, rank: number): boolean {
  return rank >= range.start && rank < range.end;
}

/** `a` minus `b`: at most two pieces, in rank order. */
function minus(a: RankRange, b: RankRange): RankRange[] {
  if (rankCount(a) === 0) return [];
  if (rankCount(b) === 0) return [a];
  const below = { start: a.start, end: Math.min(a.end, b.start) };
  const above = { start: Math.max(a.start, b.end), end: a.end };
  return [below, above].filter((piece) => rankCount(piece) > 0);
}

/** How a range change treats the ranks it touches. */
export interface RankChange {
  /** Ranks in both ranges: their live bookings are kept. */
  readonly kept: RankRange | undefined;
  /** Ranks only in the old range: their bookings end, and replays to them answer 404. */
  readonly removed: readonly RankRange[];
  /** Ranks only in the new range: they start idle. */
  readonly added: readonly RankRange[];
}

/** `undefined` stands for no ranks (a worker not in the tracker before, or not after). */
export function rankChange(before: RankRange | undefined, after: RankRange | undefined): RankChange {
  const old = before ?? NO_RANKS;
  const now = after ?? NO_RANKS;
  const overlap = { start: Math.max(old.start, now.start), end: Math.min(old.end, now.end) };
  return {
    kept: rankCount(overlap) > 0 ? overlap : undefined,
    removed: minus(old, now),
    added: minus(now, old),
  };
}
