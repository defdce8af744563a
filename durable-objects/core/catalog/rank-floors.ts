/**
 * A catalog worker's rank floors: for a rank, the newest key among the worker's changes that did not
 * keep that rank's bookings. A booking on the rank is live only while its add is newer than the
 * floor (the rule is written out in `core/replica/catalog-merge.ts`). Floors are a piecewise
 * constant function over ranks, held as sorted, disjoint segments; a rank no segment covers has no
 * floor. Only the ranks a winning upsert kept need them: every other rank's floor is that upsert's
 * own key (`floorAt` in `catalog-state.ts`).
 */
import { compareKeys, type EventKey, isNewer } from "../replica/clock";
import type { RankRange } from "./dp-ranks";

/** Ranks `start ..< end` (u32 bounds) have floor `key`. */
export interface FloorSegment {
  readonly start: number;
  readonly end: number;
  readonly key: EventKey;
}

export function segmentFloor(segments: readonly FloorSegment[], rank: number): EventKey | undefined {
  for (const segment of segments) if (rank >= segment.start && rank < segment.end) return segment.key;
  return undefined;
}

function newest(a: EventKey | undefined, b: EventKey | undefined): EventKey | undefined {
  return a === undefined ? b : isNewer(a, b) ? a : b;
}

/** The pointwise newest of `a` and `b` over `range` (nothing outside it), coalesced. */
export function newestFloors(
  range: RankRange,
  a: readonly FloorSegment[],
  b: readonly FloorSegment[],
): FloorSegment[] {
  const cuts = new Set([range.start, range.end]);
  for (const segment of [...a, ...b]) {
    for (const cut of [segment.start, segment.end]) if (cut > range.start && cut < range.end) cuts.add(cut);
  }
  const points = [...cuts].sort((x, y) => x - y);
  const out: FloorSegment[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const start = points[i]!;
    const end = points[i + 1]!;
    const key = newest(segmentFloor(a, start), segmentFloor(b, start));
    if (key === undefined) continue;
    const last = out[out.length - 1];
    if (last !== undefined && last.end === start && compareKeys(last.key, key) === 0) {
      out[out.length - 1] = { start: last.start, end, key };
    } else out.push({ start, end, key });
  }
  return out;
}

/** Raises to `key` the floors of the ranks of `range` outside `except` (every rank of it when absent). */
export function raiseFloors(
  segments: readonly FloorSegment[],
  range: RankRange,
  except: RankRange | undefined,
  key: EventKey,
): FloorSegment[] {
  return newestFloors(range, segments, outside(range, except, key));
}

/** `range` minus `except`, as segments of floor `key`. */
function outside(range: RankRange, except: RankRange | undefined, key: EventKey): FloorSegment[] {
  if (except === undefined || except.end <= range.start || except.start >= range.end) {
    return [{ ...range, key }];
  }
  const pieces = [
    { start: range.start, end: Math.max(range.start, except.start), key },
    { start: Math.min(range.end, except.end), end: range.end, key },
  ];
  return pieces.filter((piece) => piece.end > piece.start);
}
