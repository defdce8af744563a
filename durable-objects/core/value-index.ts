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
  /** Where {@link warm}'s loads go, so that they are not optimised away. */
  private sink = 0;
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

  /** The owner of `p`'s value if it has one; otherwise makes `p` the owner and returns -1. */
  claim(words: Uint32Array, p: number): number {
    if (this.count >= this.limit) this.rehash(Math.ceil(this.slots * 1.5));
    const table = this.table;
    const lo = words[2 * p]!;
    const hi = words[2 * p + 1]!;
    const hash = this.hashOf(lo, hi);
    let s = this.home(hash);
    for (let entry = table[2 * s]!; entry !== 0; entry = table[2 * s]!) {
      if (table[2 * s + 1] === hash && words[2 * entry - 2] === lo && words[2 * entry - 1] === hi) {
        return entry - 1;
      }
      s = s + 1 === this.slots ? 0 : s + 1;
    }
    table[2 * s] = p + 1;
    table[2 * s + 1] = hash;
    this.count++;
    return NONE;
  }

  /**
   * Loads the home slot of each value among `count` positions from `start` (`next` steps through
   * them), so that the misses of a whole run overlap instead of stalling one after another in the
   * loop that then uses them.
   */
  warm(words: Uint32Array, start: number, count: number, next: (p: number) => number): void {
    const table = this.table;
    let sink = this.sink;
    let p = start;
    for (let k = 0; k < count; k++) {
      if (k > 0) p = next(p);
      sink ^= table[2 * this.home(this.hashOf(words[2 * p]!, words[2 * p + 1]!))]!;
    }
    this.sink = sink;
  }

  /** Removes owner `p`. */
  remove(words: Uint32Array, p: number): void {
    const table = this.table;
    const slots = this.slots;
    let s = this.slotOf(words, p);
    // Backward shift: move later entries of the probe run into the hole when their home allows it.
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
    let s = this.home(this.hashOf(words[2 * p]!, words[2 * p + 1]!));
    while (this.table[2 * s] !== p + 1) s = s + 1 === this.slots ? 0 : s + 1;
    return s;
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
