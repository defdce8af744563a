/**
 * The index's entries: one per (block, rank) held, each a record of 9 int32 words (36 bytes) holding
 * its block, rank and deadline group and its links in three intrusive doubly linked lists at once:
 * the block's holders (the overlap walk), the rank's entries (worker and rank removal) and the
 * group's entries (expiry and eviction). One record per entry means the overlap walk reads one line
 * per holder, and unlinking reads one per neighbour. Removing an entry releases whatever it was the
 * last of: its block, rank or group. A free id has rank -1 and chains the free ids through its block
 * word. Like the block table's, `find` takes a hint: a recording's entries have consecutive ids, so
 * the entry after `e` in a renewed prompt is usually `e + 1`.
 *
 * A hash set over (block, rank) finds an entry again when a booking renews it, but only for blocks
 * with many holders: a block's holders are filed in it when they reach `fileAt` and leave it when
 * they fall to `unfileAt` (hysteresis, so a block on the edge does not file and unfile its holders on
 * every change), and a block with fewer is searched by walking its holders' list. Most blocks have a
 * holder or two (a prompt's own tail, a family's prefix on the ranks it went to), and there a set
 * insertion and deletion each were a random memory access per entry added and evicted, with the
 * deletion's shifting on top: a third of recording's cost at the cap, where a walk of one or two
 * holders reads lines the recording reads anyway. Blocks that every rank holds (a system prompt)
 * keep the set's constant-time answer. Holder counts are kept per block id, so a recording, which
 * reads its blocks in id order, reads them in order too.
 */
import { grown, NONE, nextCapacity } from "./arrays";
import { BLOCK_WORDS, type BlockTable, HEAD } from "./block-table";
import type { DeadlineGroups } from "./deadline-groups";
import { compareEviction } from "./eviction-order";
import { EMPTY, finish, IdTable, mix } from "./id-table";
import type { RankTable } from "./rank-table";

const BLOCK = 0;
const RANK = 1;
const GROUP = 2;
/** Next and previous entry (next + 1) in the block's, rank's and group's list. */
const BY_BLOCK = 3;
const BY_RANK = 5;
const BY_GROUP = 7;
const ENTRY_WORDS = 9;
/** Holders at which a block's entries join the (block, rank) set, and at which they leave it. */
const FILE_AT = 8;
const UNFILE_AT = 4;
/** The flag, in a block's holder count, of a block whose holders are in the set. */
const FILED = 1 << 30;

export class EntryStore {
  /** Entry `e`'s record is `words[9e .. 9e + 9)`. */
  private words: Int32Array;
  capacity: number;
  size = 0;
  private table: IdTable;
  private used = 0;
  private freeHead = NONE;
  /** Each block's holders, by block id, with {@link FILED} set while they are in the set. */
  private holders: Int32Array;

  constructor(
    private readonly blocks: BlockTable,
    private readonly ranks: RankTable,
    private readonly groups: DeadlineGroups,
    private readonly seed: number,
    initialCapacity = 1024,
    /** Holders at which a block's entries are filed in the set, and (lower) at which they leave it. */
    private readonly fileAt = FILE_AT,
    private readonly unfileAt = UNFILE_AT,
  ) {
    if (!(unfileAt >= 1 && fileAt > unfileAt)) {
      throw new RangeError(`need fileAt > unfileAt >= 1, got ${fileAt} and ${unfileAt}`);
    }
    this.holders = new Int32Array(blocks.capacity);
    this.capacity = initialCapacity;
    this.words = new Int32Array(initialCapacity * ENTRY_WORDS);
    this.table = new IdTable(initialCapacity);
  }

  block(e: number): number {
    return this.words[e * ENTRY_WORDS + BLOCK]!;
  }

  rank(e: number): number {
    return this.words[e * ENTRY_WORDS + RANK]!;
  }

  group(e: number): number {
    return this.words[e * ENTRY_WORDS + GROUP]!;
  }

  /** The next holder of `e`'s block, or -1. */
  nextOfBlock(e: number): number {
    return this.words[e * ENTRY_WORDS + BY_BLOCK]!;
  }

  nextOfRank(e: number): number {
    return this.words[e * ENTRY_WORDS + BY_RANK]!;
  }

  nextOfGroup(e: number): number {
    return this.words[e * ENTRY_WORDS + BY_GROUP]!;
  }

  /** The entry of block `b` on rank `r`, or -1; `hint` is an entry to try first. */
  find(b: number, r: number, hint = NONE): number {
    if (hint >= 0 && hint < this.used && this.block(hint) === b && this.rank(hint) === r) return hint;
    if (b >= this.holders.length || (this.holders[b]! & FILED) === 0) {
      for (let e = this.blocks.head(b); e !== NONE; e = this.nextOfBlock(e)) if (this.rank(e) === r) return e;
      return NONE;
    }
    const table = this.table;
    const hash = this.hashOfKey(b, r);
    for (let s = table.home(hash); ; s = table.next(s)) {
      const e = table.candidate(s, hash);
      if (e === EMPTY) return NONE;
      if (e >= 0 && this.block(e) === b && this.rank(e) === r) return e;
    }
  }

  /** A new entry of block `b` on rank `r` in group `g`; there must be none yet. */
  add(b: number, r: number, g: number): number {
    const at = b * BLOCK_WORDS + HEAD;
    const e = this.allocate();
    const o = e * ENTRY_WORDS;
    this.words[o + BLOCK] = b;
    this.words[o + RANK] = r;
    this.words[o + GROUP] = g;
    this.link(BY_BLOCK, this.blocks.words, at, e);
    if (b >= this.holders.length) this.holders = grown(this.holders, this.blocks.capacity);
    const held = ++this.holders[b]!;
    if ((held & FILED) !== 0) this.file(e, b, r);
    else if (held === this.fileAt) {
      // Enough holders that a walk would cost more than the set: all of them go in.
      for (let x = this.blocks.head(b); x !== NONE; x = this.nextOfBlock(x)) this.file(x, b, this.rank(x));
      this.holders[b] = held | FILED;
    }
    this.link(BY_RANK, this.ranks.head, r, e);
    this.joinGroup(e, g);
    this.ranks.count[r]!++;
    this.groups.count[g]!++;
    return e;
  }

  /** Moves entry `e` to group `g` (a renewal); releases its old group if that empties. */
  moveTo(e: number, g: number): void {
    const groups = this.groups;
    const old = this.group(e);
    this.unlink(BY_GROUP, groups.head, old, e);
    if (--groups.count[old]! === 0) groups.release(old);
    this.joinGroup(e, g);
    groups.count[g]!++;
    this.words[e * ENTRY_WORDS + GROUP] = g;
  }

  remove(e: number): void {
    const groups = this.groups;
    const g = this.group(e);
    this.unlink(BY_GROUP, groups.head, g, e);
    if (--groups.count[g]! === 0) groups.release(g);
    this.drop(e);
  }

  /**
   * Removes every entry of group `g` and releases it; returns how many. The group goes whole, so its
   * list is walked, not unlinked entry by entry.
   */
  drain(g: number): number {
    const groups = this.groups;
    const n = groups.count[g]!;
    for (let e = groups.head[g]!; e !== NONE; ) {
      const next = this.nextOfGroup(e);
      this.drop(e);
      e = next;
    }
    groups.head[g] = NONE;
    groups.count[g] = 0;
    groups.release(g);
    return n;
  }

  /**
   * Relinks group `g`'s list in the order of `list` (its entries, sorted by the caller into eviction
   * order), and marks it ordered.
   */
  relinkGroup(g: number, list: readonly number[]): void {
    const w = this.words;
    let prev = NONE;
    for (const e of list) {
      w[e * ENTRY_WORDS + BY_GROUP + 1] = prev;
      if (prev === NONE) this.groups.head[g] = e;
      else w[prev * ENTRY_WORDS + BY_GROUP] = e;
      prev = e;
    }
    if (prev !== NONE) w[prev * ENTRY_WORDS + BY_GROUP] = NONE;
    this.groups.unordered[g] = 0;
  }

  /** Puts `e` first in group `g`'s list, marking the list unordered if `e` does not go before the head. */
  private joinGroup(e: number, g: number): void {
    const groups = this.groups;
    const first = groups.head[g]!;
    if (
      first !== NONE &&
      groups.unordered[g] === 0 &&
      compareEviction(this, this.blocks, this.ranks, e, first) > 0
    ) {
      groups.unordered[g] = 1;
    }
    this.link(BY_GROUP, groups.head, g, e);
  }

  /** Removes entry `e` from its block's and rank's lists and frees it (its group is the caller's). */
  private drop(e: number): void {
    const b = this.block(e);
    const r = this.rank(e);
    const at = b * BLOCK_WORDS + HEAD;
    let held = this.holders[b]! - 1;
    if ((held & FILED) !== 0) this.table.delete(e, this.hashOfKey(b, r));
    this.unlink(BY_BLOCK, this.blocks.words, at, e);
    if ((held & FILED) !== 0 && (held & ~FILED) <= this.unfileAt) {
      // Few enough holders to walk: the rest leave the set.
      for (let x = this.blocks.head(b); x !== NONE; x = this.nextOfBlock(x)) {
        this.table.delete(x, this.hashOfKey(b, this.rank(x)));
      }
      held &= ~FILED;
    }
    this.holders[b] = held;
    if (this.blocks.head(b) === NONE) this.blocks.release(b);
    this.unlink(BY_RANK, this.ranks.head, r, e);
    if (--this.ranks.count[r]! === 0) this.ranks.release(r);
    this.words[e * ENTRY_WORDS + RANK] = NONE;
    this.words[e * ENTRY_WORDS + BLOCK] = this.freeHead;
    this.freeHead = e;
    this.size--;
  }

  /** Entries in the (block, rank) set: those of blocks whose holders are filed in it. */
  get sharedEntries(): number {
    return this.table.size;
  }

  get bytes(): number {
    return this.words.byteLength + this.table.bytes + this.holders.byteLength;
  }

  /** Puts `e` first in the list whose head is `heads[at]`, through the links at offset `by`. */
  private link(by: number, heads: Int32Array, at: number, e: number): void {
    const w = this.words;
    const first = heads[at]!;
    w[e * ENTRY_WORDS + by] = first;
    w[e * ENTRY_WORDS + by + 1] = NONE;
    if (first !== NONE) w[first * ENTRY_WORDS + by + 1] = e;
    heads[at] = e;
  }

  private unlink(by: number, heads: Int32Array, at: number, e: number): void {
    const w = this.words;
    const next = w[e * ENTRY_WORDS + by]!;
    const prev = w[e * ENTRY_WORDS + by + 1]!;
    if (prev !== NONE) w[prev * ENTRY_WORDS + by] = next;
    else heads[at] = next;
    if (next !== NONE) w[next * ENTRY_WORDS + by + 1] = prev;
  }

  /** Puts entry `e` of block `b` on rank `r` in the table, which does not hold it yet. */
  private file(e: number, b: number, r: number): void {
    const table = this.table;
    const hash = this.hashOfKey(b, r);
    let s = table.home(hash);
    while (table.candidate(s, hash) !== EMPTY) s = table.next(s);
    table.fill(s, e, hash);
  }

  private allocate(): number {
    let e = this.freeHead;
    if (e !== NONE) this.freeHead = this.words[e * ENTRY_WORDS + BLOCK]!;
    else {
      if (this.used === this.capacity) this.grow(nextCapacity(this.capacity));
      e = this.used++;
    }
    this.size++;
    return e;
  }

  private grow(capacity: number): void {
    this.words = grown(this.words, capacity * ENTRY_WORDS);
    this.capacity = capacity;
  }

  private hashOfKey(b: number, r: number): number {
    return finish(mix(mix(this.seed, b), r));
  }
}
