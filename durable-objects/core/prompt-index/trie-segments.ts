/**
 * The prompt trie's segment records and its child index, in one Int32Array of fixed-stride records
 * recycled through a free list. A segment is a run of blocks without a branch; the child index finds
 * a segment by (parent segment, first block), through seeded hash chains threaded through the records.
 */

export const ROOT = 0;
export const NONE = -1;
/** `RANK` of a segment covered by two or more ranks; their counts live in `RankCover`. */
export const MULTI = -2;
/** `RANK` of a segment on the free list. */
const FREE = -3;

export const PARENT = 0;
/** First position in the block pool. */
export const START = 1;
export const LEN = 2;
/** The single covering rank, MULTI, or NONE (uncovered: being built or about to be released). */
export const RANK = 3;
/** Requests through the segment on `RANK`; for MULTI, the number of distinct ranks. */
export const COUNT = 4;
/** Next segment in the same child-index bucket (free segments: next free segment). */
const CHAIN = 5;
/** The first block's words, as stored in an Int32Array: with PARENT, the child-index key. */
export const FIRST_LO = 6;
export const FIRST_HI = 7;
/**
 * Bits of the covering ranks below 64 (ranks 0–31, 32–63): a tracker of up to 64 ranks lists a
 * segment's ranks from two words instead of walking `RankCover` entries scattered in memory.
 */
export const MASK_LO = 8;
export const MASK_HI = 9;
/** Children in the index: a lookup under a segment without any (a prompt's end) costs no probe. */
const CHILDREN = 10;
export const STRIDE = 11;

export class SegmentTable {
  /** The records: field `F` of segment `s` is `data[s * STRIDE + F]`. */
  data = new Int32Array(0);
  /** Positions of each segment whose value is shared with another position. */
  sharedIn = new Int32Array(0);
  private used = 1;
  private freeHead = NONE;
  private buckets = new Int32Array(64).fill(NONE);
  private linked = 0;
  /** Where {@link warm}'s loads go, so that they are not optimised away. */
  private sink = 0;

  constructor(
    private readonly seed: number,
    /** Called with the new capacity whenever the table grows, to size per-segment side tables. */
    private readonly onGrow: (capacity: number) => void,
  ) {
    this.grow(64);
    this.data[ROOT * STRIDE + PARENT] = NONE;
    this.data[ROOT * STRIDE + RANK] = NONE;
  }

  /** A fresh segment id; the caller fills its record and links it. */
  allocate(): number {
    let seg = this.freeHead;
    if (seg !== NONE) this.freeHead = this.data[seg * STRIDE + CHAIN]!;
    else {
      if ((this.used + 1) * STRIDE > this.data.length) this.grow((this.data.length / STRIDE) * 1.5);
      seg = this.used++;
    }
    this.sharedIn[seg] = 0;
    this.data[seg * STRIDE + CHILDREN] = 0;
    return seg;
  }

  /** Returns an unlinked segment to the free list. */
  free(seg: number): void {
    this.data[seg * STRIDE + RANK] = FREE;
    this.data[seg * STRIDE + CHAIN] = this.freeHead;
    this.freeHead = seg;
  }

  /** The child of `parent` whose first block is (lo, hi), or NONE. */
  find(parent: number, lo: number, hi: number): number {
    const d = this.data;
    if (d[parent * STRIDE + CHILDREN] === 0) return NONE;
    const l = lo | 0;
    const h = hi | 0;
    for (let s = this.buckets[this.bucketOf(parent, l, h)]!; s !== NONE; s = d[s * STRIDE + CHAIN]!) {
      if (
        d[s * STRIDE + FIRST_LO] === l &&
        d[s * STRIDE + FIRST_HI] === h &&
        d[s * STRIDE + PARENT] === parent
      ) {
        return s;
      }
    }
    return NONE;
  }

  /**
   * Starts the loads of `find(parent, lo, hi)` (its bucket, and the first segment there) without
   * waiting for them, for a trie walk that knows its next lookup before it is done with the current
   * segment: in a large trie each is a cache miss, and they then overlap with the walk's own.
   */
  warm(parent: number, lo: number, hi: number): void {
    const d = this.data;
    if (d[parent * STRIDE + CHILDREN] === 0) return;
    const s = this.buckets[this.bucketOf(parent, lo | 0, hi | 0)]!;
    if (s !== NONE) this.sink ^= d[s * STRIDE + FIRST_LO]!;
  }

  /** Enters `seg` in the child index under its (PARENT, FIRST_LO, FIRST_HI). */
  link(seg: number): void {
    if (this.linked >= this.buckets.length) {
      this.rehash(this.buckets.length * 2);
    } else {
      const b = this.keyOf(seg);
      this.data[seg * STRIDE + CHAIN] = this.buckets[b]!;
      this.buckets[b] = seg;
    }
    this.linked++;
    this.data[this.data[seg * STRIDE + PARENT]! * STRIDE + CHILDREN]!++;
  }

  unlink(seg: number): void {
    this.replace(seg, NONE);
    this.linked--;
    this.data[this.data[seg * STRIDE + PARENT]! * STRIDE + CHILDREN]!--;
  }

  /** Puts `next` (same key, so same parent; NONE to delete) in `seg`'s place in the child index. */
  replace(seg: number, next: number): void {
    const d = this.data;
    const b = this.keyOf(seg);
    const after = d[seg * STRIDE + CHAIN]!;
    if (next !== NONE) d[next * STRIDE + CHAIN] = after;
    const link = next === NONE ? after : next;
    let s = this.buckets[b]!;
    if (s === seg) {
      this.buckets[b] = link;
      return;
    }
    while (d[s * STRIDE + CHAIN] !== seg) s = d[s * STRIDE + CHAIN]!;
    d[s * STRIDE + CHAIN] = link;
  }

  /**
   * Rebuilds the index over every segment in use. When `link` calls it, every such segment but the
   * one being linked is in the index already, and that one is meant to be: so all of them go in.
   */
  private rehash(size: number): void {
    const d = this.data;
    this.buckets = new Int32Array(size).fill(NONE);
    for (let seg = 1; seg < this.used; seg++) {
      if (d[seg * STRIDE + RANK] === FREE) continue;
      const b = this.keyOf(seg);
      d[seg * STRIDE + CHAIN] = this.buckets[b]!;
      this.buckets[b] = seg;
    }
  }

  private keyOf(seg: number): number {
    const d = this.data;
    return this.bucketOf(d[seg * STRIDE + PARENT]!, d[seg * STRIDE + FIRST_LO]!, d[seg * STRIDE + FIRST_HI]!);
  }

  private bucketOf(parent: number, lo: number, hi: number): number {
    let h = Math.imul(lo ^ Math.imul(hi ^ this.seed, 0x9e3779b1), 0x85ebca6b) ^ Math.imul(parent, 0xc2b2ae35);
    h = Math.imul(h ^ (h >>> 15), 0x27d4eb2f);
    return (h ^ (h >>> 13)) & (this.buckets.length - 1);
  }

  private grow(capacity: number): void {
    const segments = Math.ceil(capacity);
    const data = new Int32Array(segments * STRIDE);
    data.set(this.data);
    this.data = data;
    const shared = new Int32Array(segments);
    shared.set(this.sharedIn);
    this.sharedIn = shared;
    this.onGrow(segments);
  }
}
