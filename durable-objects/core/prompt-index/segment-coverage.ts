/**
 * Which ranks cover each trie segment, and how many distinct blocks each rank holds. A segment
 * covered by one rank keeps (rank, requests) inline in its record; a second rank moves the counts to
 * the {@link RankCover} table and back when one is left. A rank's block count changes only when it
 * starts or stops covering a segment: by the segment's length, corrected through `ValueGroups` for
 * positions whose value is also held elsewhere.
 */
import type { RankCover } from "./rank-cover";
import { COUNT, LEN, MASK_HI, MASK_LO, MULTI, NONE, RANK, type SegmentTable, STRIDE } from "./trie-segments";
import type { ValueGroups } from "./value-groups";

export class SegmentCoverage {
  /** Distinct-hash count per rank id. */
  private blockCounts = new Int32Array(16);

  constructor(
    private readonly segments: SegmentTable,
    private readonly ranks: RankCover,
    private readonly groups: ValueGroups,
  ) {}

  /** Distinct hashes over the live prompts on `rank`. */
  blocks(rank: number): number {
    return rank < this.blockCounts.length ? this.blockCounts[rank]! : 0;
  }

  ensureRank(rank: number): void {
    if (rank < this.blockCounts.length) return;
    const next = new Int32Array(Math.max(rank + 1, this.blockCounts.length * 2));
    next.set(this.blockCounts);
    this.blockCounts = next;
  }

  /** One more request on `rank` runs through `seg`. */
  cover(seg: number, rank: number): void {
    const d = this.segments.data;
    const s = seg * STRIDE;
    const single = d[s + RANK]!;
    if (single === rank) {
      d[s + COUNT]!++;
      return;
    }
    if (single === NONE) {
      d[s + RANK] = rank;
      d[s + COUNT] = 1;
    } else if (single === MULTI) {
      if (this.ranks.add(seg, rank, 1) > 1) return;
      d[s + COUNT]!++;
    } else {
      this.ranks.add(seg, single, d[s + COUNT]!);
      this.ranks.add(seg, rank, 1);
      d[s + RANK] = MULTI;
      d[s + COUNT] = 2;
    }
    this.countBlocks(seg, rank, 1);
  }

  /** One request on `rank` through `seg` is gone; `seg`'s RANK is NONE once no request runs through it. */
  uncover(seg: number, rank: number): void {
    const d = this.segments.data;
    const s = seg * STRIDE;
    if (d[s + RANK] === MULTI) {
      if (this.ranks.add(seg, rank, -1) > 0) return;
      if (--d[s + COUNT]! === 1) {
        // One rank is left: its count moves back inline.
        const last = this.ranks.first(seg);
        const only = this.ranks.rankOf(last);
        const count = this.ranks.countOf(last);
        this.ranks.add(seg, only, -count);
        d[s + RANK] = only;
        d[s + COUNT] = count;
      }
    } else if (--d[s + COUNT]! > 0) {
      return;
    } else {
      d[s + RANK] = NONE;
    }
    this.countBlocks(seg, rank, -1);
  }

  /** `rank` started (1) or stopped (−1) covering `seg`: a block per value it alone brings. */
  private countBlocks(seg: number, rank: number, sign: 1 | -1): void {
    if (rank < 64) {
      const field = seg * STRIDE + (rank < 32 ? MASK_LO : MASK_HI);
      const bit = 1 << (rank & 31);
      const d = this.segments.data;
      d[field] = sign > 0 ? d[field]! | bit : d[field]! & ~bit;
    }
    const shared = this.segments.sharedIn[seg]!;
    let delta = sign * (this.segments.data[seg * STRIDE + LEN]! - shared);
    if (shared > 0) delta += this.groups.countShared(seg, rank, sign);
    this.blockCounts[rank]! += delta;
  }
}
