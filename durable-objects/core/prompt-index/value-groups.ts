/**
 * Block hash values held at more than one live position of the prompt trie. Real chained hashes never
 * repeat, so this is the rare path that keeps `blocks(rank)` exact when a client sends one value at
 * two depths or under many parents: the value's owner position (in the {@link ValueIndex}) keys a
 * group that counts, per rank, how many of the value's positions lie in segments the rank covers.
 * A rank has the value as a block while that count is above zero. Every step is O(1) expected however
 * often a value repeats, so no input makes the tracker quadratic.
 *
 * Nothing is stored per position: a segment counts its positions whose value is shared
 * (`sharedIn`), and only a segment with some pays for looking its positions' groups up.
 */
import type { BlockPool } from "./block-pool";
import type { RankCover } from "./rank-cover";
import { LEN, MULTI, NONE, RANK, type SegmentTable, START, STRIDE } from "./trie-segments";
import type { ValueIndex } from "./value-index";

interface ValueGroup {
  /** The value's positions, unordered; removal swaps the last member into the gap. */
  members: number[];
  /** Index of each position in `members`. */
  slotOf: Map<number, number>;
  /** Per rank: members in segments the rank covers (absent: none). */
  covers: Map<number, number>;
}

export class ValueGroups {
  /** Groups by their value's owner position. */
  private readonly groups = new Map<number, ValueGroup>();
  /** (position, owner) pairs of a run's values that were held already. */
  private clashes = new Int32Array(128);

  constructor(
    private readonly pool: BlockPool,
    private readonly values: ValueIndex,
    private readonly segments: SegmentTable,
    private readonly cover: RankCover,
  ) {}

  /** Indexes the `length` positions from `start` (words written) of `seg`, which no rank covers yet. */
  placeRun(start: number, length: number, seg: number): void {
    if (this.clashes.length < 2 * length) this.clashes = new Int32Array(2 * length);
    const clashes = this.clashes;
    const found = this.values.claimRun(this.pool, start, length, clashes);
    for (let i = 0; i < found; i++) this.join(clashes[2 * i]!, clashes[2 * i + 1]!, seg);
  }

  /** Unindexes the `length` positions from `start` of `seg`, which no rank covers any more. */
  dropRun(start: number, length: number, seg: number): void {
    if (this.segments.sharedIn[seg] === 0) {
      this.values.removeRun(this.pool, start, length);
      return;
    }
    let p = start;
    for (let k = 0; k < length; k++) {
      if (k > 0) p = this.pool.after(p);
      this.drop(p, seg);
    }
  }

  /** Position `p` of `seg` holds the value `owner` holds: both are now in the value's group. */
  private join(p: number, owner: number, seg: number): void {
    const { pool, segments } = this;
    let group = this.groups.get(owner);
    if (!group) {
      // The value was at the owner alone: each rank covering the owner's segment covers one position.
      group = { members: [owner], slotOf: new Map([[owner, 0]]), covers: new Map() };
      const ownerSeg = pool.segOf(owner);
      const rank = segments.data[ownerSeg * STRIDE + RANK]!;
      if (rank === MULTI) {
        for (let e = this.cover.first(ownerSeg); e !== NONE; e = this.cover.nextOf(e)) {
          group.covers.set(this.cover.rankOf(e), 1);
        }
      } else if (rank !== NONE) group.covers.set(rank, 1);
      segments.sharedIn[ownerSeg]!++;
      this.groups.set(owner, group);
    }
    group.slotOf.set(p, group.members.push(p) - 1);
    segments.sharedIn[seg]!++;
  }

  /** Unindexes position `p` of `seg`, which no rank covers any more. */
  private drop(p: number, seg: number): void {
    const group = this.groupAt(p, seg);
    if (!group) {
      this.values.remove(this.pool.words, p);
      return;
    }
    const slot = group.slotOf.get(p)!;
    const last = group.members.pop()!;
    if (last !== p) {
      group.members[slot] = last;
      group.slotOf.set(last, slot);
    }
    group.slotOf.delete(p);
    this.segments.sharedIn[seg]!--;
    let owner = this.ownerOf(p);
    if (owner === p) {
      owner = group.members[0]!;
      this.values.replace(this.pool.words, p, owner);
      this.groups.delete(p);
      this.groups.set(owner, group);
    }
    if (group.members.length === 1) {
      // One position is left: its segment's coverage says all the group counted.
      this.segments.sharedIn[this.pool.segOf(owner)]!--;
      this.groups.delete(owner);
    }
  }

  /** The `length` positions from `from` of `seg` were copied to the run from `to` (a split). */
  moveRun(from: number, to: number, length: number, seg: number): void {
    if (this.segments.sharedIn[seg] === 0) {
      this.values.relocateRun(this.pool, from, to, length);
      return;
    }
    let p = from;
    let q = to;
    for (let k = 0; k < length; k++) {
      if (k > 0) {
        p = this.pool.after(p);
        q = this.pool.after(q);
      }
      this.move(p, q, seg);
    }
  }

  /** Position `from` of `seg` was copied to `to`. */
  private move(from: number, to: number, seg: number): void {
    const group = this.groupAt(from, seg);
    if (group) {
      const slot = group.slotOf.get(from)!;
      group.members[slot] = to;
      group.slotOf.delete(from);
      group.slotOf.set(to, slot);
      if (this.ownerOf(from) !== from) return;
      this.groups.delete(from);
      this.groups.set(to, group);
    }
    this.values.replace(this.pool.words, from, to);
  }

  /** Positions among the `length` from `start` of `seg` whose value is shared. */
  countSharedIn(start: number, length: number, seg: number): number {
    if (this.segments.sharedIn[seg] === 0) return 0;
    let shared = 0;
    let p = start;
    for (let k = 0; k < length; k++) {
      if (k > 0) p = this.pool.after(p);
      if (this.groups.has(this.ownerOf(p))) shared++;
    }
    return shared;
  }

  /**
   * `rank` started (`sign` 1) or stopped (−1) covering `seg`: updates the groups of its shared
   * positions and returns the change in the rank's distinct values among them.
   */
  countShared(seg: number, rank: number, sign: 1 | -1): number {
    const len = this.segments.data[seg * STRIDE + LEN]!;
    let delta = 0;
    let p = this.segments.data[seg * STRIDE + START]!;
    for (let k = 0; k < len; k++) {
      if (k > 0) p = this.pool.after(p);
      const group = this.groups.get(this.ownerOf(p));
      if (!group) continue;
      const before = group.covers.get(rank) ?? 0;
      const after = before + sign;
      if (after === 0) group.covers.delete(rank);
      else group.covers.set(rank, after);
      if (before === 0 || after === 0) delta += sign;
    }
    return delta;
  }

  /** The group of `p`'s value when it is shared; only a segment with shared positions looks. */
  private groupAt(p: number, seg: number): ValueGroup | undefined {
    return this.segments.sharedIn[seg] === 0 ? undefined : this.groups.get(this.ownerOf(p));
  }

  private ownerOf(p: number): number {
    const w = this.pool.words;
    return this.values.find(w, w[2 * p]!, w[2 * p + 1]!);
  }
}
