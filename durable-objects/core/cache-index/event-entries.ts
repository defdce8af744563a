/**
 * The event index's entries: one per (rank, engine block hash), each a record of 12 int32 words
 * (48 bytes), no object or bigint per entry:
 *
 * - `META`: the rank's id (low 20 bits) and the tiers holding the block (bits 20–23, one per
 *   `StorageTier`); -1 marks a free record, whose `FIRST_CHILD` word chains the free ids.
 * - `ENGINE`, `PATH`, `LOCAL`: the engine's hash of the block, the path hash of its node (its
 *   prefix's public sequence hash, `path-hash.ts`) and its tokens' public local hash.
 * - The rank's own tree, as the engine chained it by parent hash: `FIRST_CHILD`, and `NEXT_SIB` /
 *   `PREV_SIB` in the parent's list of children. A first child's `PREV_SIB` names its parent
 *   (`-2 - parent`, or -1 under the rank's root, whose list starts at `RankTable.head`), so a
 *   record needs no parent word: unlinking is O(1) and only a first child has to find its parent.
 * - `NEXT_HOLDER`: the next entry of the same node (another rank, or the same rank under another
 *   engine hash) in the node's ring of holders, which the overlap walk reads (`event-lookups.ts`).
 * - `AGE`: for a leaf, which the leaf queue holds, `~place` of its place there (`leaf-queue.ts`,
 *   where its age is); for an entry with children, its age's id in the age table (`age-table.ts`).
 *   The sign tells which.
 *
 * The budget is 64 bytes an entry with the two lookup tables (about 12 bytes an entry together,
 * `event-lookups.ts`), so nothing is in every record that only some entries need: the leaf
 * queue's links are in the queue's places, and an age, shared by the blocks one call stored, is
 * one word.
 */
import { grown, NONE, nextCapacity } from "./arrays";
import { MAX_PACKED_IDS } from "./packed-id-table";

export const META = 0;
export const ENGINE = 1;
export const PATH = 3;
export const LOCAL = 5;
export const FIRST_CHILD = 7;
export const NEXT_SIB = 8;
export const PREV_SIB = 9;
export const NEXT_HOLDER = 10;
export const AGE = 11;
export const ENTRY_WORDS = 12;

export const RANK_MASK = 0xfffff;
export const TIER_SHIFT = 20;
/** `PREV_SIB` of the first root of a rank. */
export const UNDER_ROOT = -1;

export class EventEntries {
  /** Entry `e`'s record is `words[12e .. 12e + 12)`. */
  words: Int32Array;
  capacity: number;
  size = 0;
  private used = 0;
  private freeHead = NONE;

  constructor(
    initialCapacity: number,
    /** Capacity past which growth slows to 1/64 at a time: the index's cap. */
    private readonly softLimit: number,
  ) {
    this.capacity = initialCapacity;
    this.words = new Int32Array(initialCapacity * ENTRY_WORDS);
  }

  rank(e: number): number {
    return this.words[e * ENTRY_WORDS + META]! & RANK_MASK;
  }

  tiers(e: number): number {
    return this.words[e * ENTRY_WORDS + META]! >>> TIER_SHIFT;
  }

  firstChild(e: number): number {
    return this.words[e * ENTRY_WORDS + FIRST_CHILD]!;
  }

  nextSibling(e: number): number {
    return this.words[e * ENTRY_WORDS + NEXT_SIB]!;
  }

  isLeaf(e: number): boolean {
    return this.words[e * ENTRY_WORDS + FIRST_CHILD] === NONE;
  }

  /** The parent of `e`, or -1 for a root: found through the previous siblings (rarely needed). */
  parentOf(e: number): number {
    const w = this.words;
    let prev = w[e * ENTRY_WORDS + PREV_SIB]!;
    while (prev >= 0) prev = w[prev * ENTRY_WORDS + PREV_SIB]!;
    return prev === UNDER_ROOT ? NONE : -2 - prev;
  }

  /** Whether `e` is `x` or one of its ancestors. */
  isAncestorOrSelf(e: number, x: number): boolean {
    for (let a = x; a !== NONE; a = this.parentOf(a)) if (a === e) return true;
    return false;
  }

  engineHash(e: number): bigint {
    return this.u64At(e, ENGINE);
  }

  /** The public local hash of entry `e`'s block. */
  localHash(e: number): bigint {
    return this.u64At(e, LOCAL);
  }

  allocate(): number {
    let e = this.freeHead;
    if (e !== NONE) this.freeHead = this.words[e * ENTRY_WORDS + FIRST_CHILD]!;
    else {
      if (this.used === this.capacity) this.grow();
      e = this.used++;
    }
    this.size++;
    return e;
  }

  free(e: number): void {
    this.words[e * ENTRY_WORDS + META] = NONE;
    this.words[e * ENTRY_WORDS + FIRST_CHILD] = this.freeHead;
    this.freeHead = e;
    this.size--;
  }

  /** Whether `e` is a live entry (not free, not beyond the records in use). */
  isLive(e: number): boolean {
    return e >= 0 && e < this.used && this.words[e * ENTRY_WORDS + META] !== NONE;
  }

  /** Ids of records ever used: live entries are among `0 .. usedIds`. */
  get usedIds(): number {
    return this.used;
  }

  get bytes(): number {
    return this.words.byteLength;
  }

  /**
   * Grows by half up to the index's cap, then by 1/64: the cap is where a busy index stays, so
   * its arrays should end there, not half again beyond (a run that overshoots the cap before
   * eviction takes the few records more it needs).
   */
  private grow(): void {
    const c = this.capacity;
    let next = nextCapacity(c);
    if (c < this.softLimit) next = Math.min(next, this.softLimit);
    else next = c + Math.max(16, c >> 6);
    if (next > MAX_PACKED_IDS - 1) next = MAX_PACKED_IDS - 1;
    if (next <= c) throw new RangeError(`the event index cannot hold more than ${c} entries`);
    this.words = grown(this.words, next * ENTRY_WORDS);
    this.capacity = next;
  }

  private u64At(e: number, offset: number): bigint {
    const o = e * ENTRY_WORDS + offset;
    return (BigInt(this.words[o + 1]! >>> 0) << 32n) | BigInt(this.words[o]! >>> 0);
  }
}
