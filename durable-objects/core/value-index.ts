/**
 * Finds the *owner* position of a block hash value: one live position per distinct value. Linear
 * probing over one Int32Array of (position + 1, 32-bit hash) pairs: a lookup of an absent value (the
 * usual case: a fresh request's own blocks) reads one cache line, and only a matching hash sends it
 * to the pool to compare the value itself. Deletion shifts the following entries back (no
 * tombstones), finding their home slots from the stored hash without touching the pool, so the table
 * neither degrades with churn nor costs a cache miss per entry moved. The hash is seeded per trie so
 * colliding values cannot be crafted offline.
 *
 * This table is a large share of a tracker's memory, so it grows by half (between 50% and 75% full)
 * rather than doubling, and maps a hash to its home slot by scaling rather than masking, which allows
 * sizes that are not powers of two.
 */

import type { BlockPool } from "./block-pool";

const NONE = -1;
/** Grow past this load factor; linear probing stays at a few probes below it. */
const MAX_LOAD = 0.75;
const TWO_32 = 2 ** 32;

export class ValueIndex {
  /** Slot `s`: `table[2s]` = owner position + 1 (0: empty), `table[2s + 1]` = its value's hash. */
  private table: Int32Array;
  private slots: number;
  /** `slots / 2^32`: a hash's home slot is `hash × scale`, truncated. */
  private scale: number;
  /** Where the warming loads go, so that they are not optimised away. */
  private sink = 0;
  /** Hashes of the run being claimed or removed. */
  private scratch = new Int32Array(64);
  private count = 0;
  private limit: number;

  constructor(
    private readonly seed: number,
    initialSlots = 1024,
  ) {
    this.slots = Math.max(16, initialSlots);
    this.scale = this.slots / TWO_32;
    this.table = new Int32Array(this.slots * 2);
    this.limit = Math.floor(this.slots * MAX_LOAD);
  }

  /** The owner of value (lo, hi), whose words are in `words`, or -1. */
  find(words: Uint32Array, lo: number, hi: number): number {
    const table = this.table;
    const hash = this.hashOf(lo, hi);
    for (let s = this.home(hash); ; s = s + 1 === this.slots ? 0 : s + 1) {
      const entry = table[2 * s]!;
      if (entry === 0) return NONE;
      if (table[2 * s + 1] === hash && words[2 * entry - 2] === lo && words[2 * entry - 1] === hi) {
        return entry - 1;
      }
    }
  }

  /**
   * Claims every position of a run of `length` from `start`, as {@link claim} does one. Positions
   * whose value already has an owner are left out and written to `clashes` as (position, owner)
   * pairs; returns how many. The run's hashes and home slots are computed first, in a tight loop
   * whose loads are independent, so the cache misses of the whole run overlap instead of stalling
   * one by one in the probing loop.
   */
  claimRun(pool: BlockPool, start: number, length: number, clashes: Int32Array): number {
    while (this.count + length > this.limit) this.rehash(Math.ceil(this.slots * 1.5));
    const hashes = this.hashRun(pool, start, length);
    const table = this.table;
    const words = pool.words;
    let found = 0;
    let p = start;
    for (let k = 0; k < length; k++) {
      if (k > 0) p = pool.after(p);
      const hash = hashes[k]!;
      let s = this.home(hash);
      let owner = NONE;
      for (let entry = table[2 * s]!; entry !== 0; entry = table[2 * s]!) {
        if (
          table[2 * s + 1] === hash &&
          words[2 * entry - 2] === words[2 * p] &&
          words[2 * entry - 1] === words[2 * p + 1]
        ) {
          owner = entry - 1;
          break;
        }
        s = s + 1 === this.slots ? 0 : s + 1;
      }
      if (owner === NONE) {
        table[2 * s] = p + 1;
        table[2 * s + 1] = hash;
        this.count++;
      } else {
        clashes[2 * found] = p;
        clashes[2 * found + 1] = owner;
        found++;
      }
    }
    return found;
  }

  /** Removes every position of a run of `length` from `start`, each the owner of its value. */
  removeRun(pool: BlockPool, start: number, length: number): void {
    const hashes = this.hashRun(pool, start, length);
    let p = start;
    for (let k = 0; k < length; k++) {
      if (k > 0) p = pool.after(p);
      this.removeAt(this.slotFrom(this.home(hashes[k]!), p));
    }
  }

  /** Moves ownership of each value of the run of `length` from `from` to the same value's copy in the run from `to`. */
  relocateRun(pool: BlockPool, from: number, to: number, length: number): void {
    const hashes = this.hashRun(pool, from, length);
    let p = from;
    let q = to;
    for (let k = 0; k < length; k++) {
      if (k > 0) {
        p = pool.after(p);
        q = pool.after(q);
      }
      this.table[2 * this.slotFrom(this.home(hashes[k]!), p)] = q + 1;
    }
  }

  /** The run's hashes, in a scratch array; loading each home slot on the way warms the cache. */
  private hashRun(pool: BlockPool, start: number, length: number): Int32Array {
    if (this.scratch.length < length)
      this.scratch = new Int32Array(Math.max(length, 2 * this.scratch.length));
    const hashes = this.scratch;
    const words = pool.words;
    const table = this.table;
    let sink = this.sink;
    let p = start;
    for (let k = 0; k < length; k++) {
      if (k > 0) p = pool.after(p);
      const hash = this.hashOf(words[2 * p]!, words[2 * p + 1]!);
      hashes[k] = hash;
      sink ^= table[2 * this.home(hash)]!;
    }
    this.sink = sink;
    return hashes;
  }

  /** Removes owner `p`. */
  remove(words: Uint32Array, p: number): void {
    this.removeAt(this.slotOf(words, p));
  }

  /** Empties slot `s`, shifting later entries of its probe run back into the hole when their home allows. */
  private removeAt(slot: number): void {
    const table = this.table;
    const slots = this.slots;
    let s = slot;
    for (
      let next = s + 1 === slots ? 0 : s + 1;
      table[2 * next] !== 0;
      next = next + 1 === slots ? 0 : next + 1
    ) {
      const home = this.home(table[2 * next + 1]!);
      const fromHome = next >= home ? next - home : next - home + slots;
      const fromHole = next >= s ? next - s : next - s + slots;
      if (fromHome >= fromHole) {
        table[2 * s] = table[2 * next]!;
        table[2 * s + 1] = table[2 * next + 1]!;
        s = next;
      }
    }
    table[2 * s] = 0;
    this.count--;
  }

  /** Replaces owner `from` by `to`, a position with the same value. */
  replace(words: Uint32Array, from: number, to: number): void {
    this.table[2 * this.slotOf(words, from)] = to + 1;
  }

  /** The slot holding owner `p`. */
  private slotOf(words: Uint32Array, p: number): number {
    return this.slotFrom(this.home(this.hashOf(words[2 * p]!, words[2 * p + 1]!)), p);
  }

  /** The slot holding owner `p`, probing from slot `s`. */
  private slotFrom(s: number, p: number): number {
    let slot = s;
    while (this.table[2 * slot] !== p + 1) slot = slot + 1 === this.slots ? 0 : slot + 1;
    return slot;
  }

  private place(p: number, hash: number): void {
    const table = this.table;
    let s = this.home(hash);
    while (table[2 * s] !== 0) s = s + 1 === this.slots ? 0 : s + 1;
    table[2 * s] = p + 1;
    table[2 * s + 1] = hash;
  }

  private rehash(slots: number): void {
    const old = this.table;
    this.table = new Int32Array(slots * 2);
    this.slots = slots;
    this.scale = slots / TWO_32;
    this.limit = Math.floor(slots * MAX_LOAD);
    for (let s = 0; s < old.length; s += 2) {
      if (old[s] !== 0) this.place(old[s]! - 1, old[s + 1]!);
    }
  }

  /** The hash's home slot: its fraction of 2^32 scaled to the table (exact enough, and deterministic). */
  private home(hash: number): number {
    return ((hash >>> 0) * this.scale) >>> 0;
  }

  /** Seeded mix of both halves, so structured hashes spread and crafted collisions cannot be precomputed. */
  private hashOf(lo: number, hi: number): number {
    let h = Math.imul(lo ^ Math.imul(hi ^ this.seed, 0x9e3779b1), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    return h ^ (h >>> 16);
  }
}
