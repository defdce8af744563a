/**
 * Finds the *owner* position of a block hash value: one live position per distinct value. Linear
 * probing over one Int32Array of (position + 1, 32-bit hash) pairs: a lookup of an absent value (the
 * usual case: a fresh request's own blocks) reads one cache line, and only a matching hash sends it
 * to the pool to compare the value itself. The hash is seeded per trie so colliding values cannot be
 * crafted offline.
 *
 * The table is *ordered* (Amble and Knuth, "Ordered hash tables", 1974): a hash's home slot is its
 * fraction of 2^32 scaled to the table, which is monotone in the hash, and probe runs never wrap (they
 * continue into a few spill slots past the last home), so the entries sit in hash order. A lookup
 * stops at the first larger hash instead of at the end of its run; a deletion shifts back only the
 * entries displaced past the hole, and stops at the first one at home, instead of walking the rest of
 * the run and computing every entry's home (what plain linear probing must do, and what churn made
 * the tracker's most expensive step); an insertion shifts the rest of its run forward one slot, a
 * loop without hashing or branches to mispredict. There are no tombstones: churn does not degrade it.
 *
 * This table is a large share of a tracker's memory, so it grows by half (between 50% and 75% full)
 * rather than doubling; scaling rather than masking allows sizes that are not powers of two.
 */

import { type BlockPool, CHUNK } from "./block-pool";
import { homeIn, removeAt, valueHash } from "./ordered-slots";

const NONE = -1;
/** Grow past this load factor; linear probing stays at a few probes below it. */
const MAX_LOAD = 0.75;
const TWO_32 = 2 ** 32;
/** Slots past the last home where the last runs continue; doubled in the (improbable) case one fills them. */
const SPILL = 32;
/**
 * Tables of more home slots (8 bytes each: 4 MB) are warmed before a run is claimed or removed. A
 * larger table's lines come from memory, and overlapping their misses more than pays for a second
 * hashing pass; a smaller one's mostly come from the caches, and the pass costs more than it saves.
 * Measured (32 claims and 32 removals under cache pressure): a 0.7 MB table, 4.7 -> 3.9 us without
 * the pass; a 41 MB table, 11 -> 17 us without it.
 */
const WARM_ABOVE_SLOTS = 1 << 19;

export class ValueIndex {
  /**
   * Slot `s`: `table[2s]` = owner position + 1 (0: empty), `table[2s + 1]` = its value's hash. Home
   * slots are `0 ..< slots`, followed by `spill` more; the last slot stays empty and ends every probe.
   */
  private table: Int32Array;
  private slots: number;
  private spill = SPILL;
  /** `slots / 2^32`: a hash's home slot is `hash × scale`, truncated. */
  private scale: number;
  /** Where the warming loads go, so that they are not optimised away. */
  private sink = 0;
  /** Scratch for the warming pass: twice the home slot of each value of the run. */
  private homes = new Int32Array(64);
  private count = 0;
  private limit: number;

  constructor(
    private readonly seed: number,
    initialSlots = 1024,
  ) {
    this.slots = Math.max(16, initialSlots);
    this.scale = this.slots / TWO_32;
    this.table = new Int32Array((this.slots + this.spill) * 2);
    this.limit = Math.floor(this.slots * MAX_LOAD);
  }

  /** The owner of value (lo, hi), whose words are in `words`, or -1. */
  find(words: Uint32Array, lo: number, hi: number): number {
    const table = this.table;
    const hash = this.hashOf(lo, hi);
    for (let s = this.home(hash); ; s++) {
      const entry = table[2 * s]!;
      if (entry === 0) return NONE;
      const stored = table[2 * s + 1]!;
      if (stored > hash) return NONE;
      if (stored === hash && words[2 * entry - 2] === lo && words[2 * entry - 1] === hi) return entry - 1;
    }
  }

  /**
   * Claims every position of a run of `length` from `start`, as {@link claim} does one. Positions
   * whose value already has an owner are left out and written to `clashes` as (position, owner)
   * pairs; returns how many.
   */
  claimRun(pool: BlockPool, start: number, length: number, clashes: Int32Array): number {
    while (this.count + length > this.limit) this.rehash(Math.ceil(this.slots * 1.5), this.spill);
    if (this.slots > WARM_ABOVE_SLOTS) this.warm(pool, start, length);
    const words = pool.words;
    const { seed, scale } = this;
    let table = this.table;
    let found = 0;
    let added = 0;
    let p = start;
    for (let k = 0; k < length; ) {
      for (const stop = runStop(p, k, length); k < stop; k++, p++) {
        const lo = words[2 * p]!;
        const hi = words[2 * p + 1]!;
        const hash = valueHash(lo, hi, seed);
        let s = homeIn(hash, scale);
        let entry = table[2 * s]!;
        while (entry !== 0 && table[2 * s + 1]! < hash) entry = table[2 * ++s]!;
        let owner = NONE;
        while (entry !== 0 && table[2 * s + 1] === hash) {
          if (words[2 * entry - 2] === lo && words[2 * entry - 1] === hi) {
            owner = entry - 1;
            break;
          }
          entry = table[2 * ++s]!;
        }
        if (owner !== NONE) {
          clashes[2 * found] = p;
          clashes[2 * found + 1] = owner;
          found++;
          continue;
        }
        // `p` goes at `s`, in hash order; the rest of the run moves up one slot.
        let carry = p + 1;
        let carryHash = hash;
        while (entry !== 0) {
          const stored = table[2 * s + 1]!;
          table[2 * s] = carry;
          table[2 * s + 1] = carryHash;
          carry = entry;
          carryHash = stored;
          entry = table[2 * ++s]!;
        }
        table[2 * s] = carry;
        table[2 * s + 1] = carryHash;
        added++;
        if (2 * s + 2 === table.length) {
          this.rehash(this.slots, this.spill * 2);
          table = this.table;
        }
      }
      if (k < length) p = pool.after(p - 1);
    }
    this.count += added;
    return found;
  }

  /** Removes every position of a run of `length` from `start`, each the owner of its value. */
  removeRun(pool: BlockPool, start: number, length: number): void {
    if (this.slots > WARM_ABOVE_SLOTS) this.warm(pool, start, length);
    const words = pool.words;
    const { table, seed, scale } = this;
    let p = start;
    for (let k = 0; k < length; ) {
      for (const stop = runStop(p, k, length); k < stop; k++, p++) {
        let s = homeIn(valueHash(words[2 * p]!, words[2 * p + 1]!, seed), scale);
        while (table[2 * s] !== p + 1) s++;
        removeAt(table, s, scale);
      }
      if (k < length) p = pool.after(p - 1);
    }
    this.count -= length;
  }

  /** Moves ownership of each value of the run of `length` from `from` to the same value's copy in the run from `to`. */
  relocateRun(pool: BlockPool, from: number, to: number, length: number): void {
    const words = pool.words;
    const { table, seed, scale } = this;
    let p = from;
    let q = to;
    for (let k = 0; k < length; k++) {
      if (k > 0) {
        p = pool.after(p);
        q = pool.after(q);
      }
      let s = homeIn(valueHash(words[2 * p]!, words[2 * p + 1]!, seed), scale);
      while (table[2 * s] !== p + 1) s++;
      table[2 * s] = q + 1;
    }
  }

  /**
   * Loads the home slot of every value of a run before the run is claimed or removed, so that the
   * cache misses of the whole run are in flight at once instead of one by one in the probing loop
   * that follows. The home slots are computed first and loaded in a loop of nothing else: the
   * processor keeps only so many instructions in flight, and with the hashing in the same loop (as
   * V8 compiles it) that window held three or four misses at a time.
   */
  private warm(pool: BlockPool, start: number, length: number): void {
    if (this.homes.length < length) this.homes = new Int32Array(Math.max(length, 2 * this.homes.length));
    const { homes, seed, scale } = this;
    const words = pool.words;
    let p = start;
    for (let k = 0; k < length; ) {
      for (const stop = runStop(p, k, length); k < stop; k++, p++) {
        homes[k] = 2 * homeIn(valueHash(words[2 * p]!, words[2 * p + 1]!, seed), scale);
      }
      if (k < length) p = pool.after(p - 1);
    }
    const table = this.table;
    let sink = this.sink;
    for (let k = 0; k < length; k++) sink ^= table[homes[k]!]!;
    this.sink = sink;
  }

  /** Removes owner `p`. */
  remove(words: Uint32Array, p: number): void {
    removeAt(this.table, this.slotOf(words, p), this.scale);
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
    const table = this.table;
    let slot = s;
    while (table[2 * slot] !== p + 1) slot++;
    return slot;
  }

  /**
   * Rebuilds the table with `slots` homes and `spill` slots past them. The old entries are already in
   * hash order, so each goes to its home or just after the previous one: no probing.
   */
  private rehash(slots: number, spill: number): void {
    const old = this.table;
    const scale = slots / TWO_32;
    for (let room = spill; ; room *= 2) {
      const table = new Int32Array((slots + room) * 2);
      let next = 0;
      let s = 0;
      for (; s < old.length; s += 2) {
        if (old[s] === 0) continue;
        const at = Math.max(next, homeIn(old[s + 1]!, scale));
        // The last slot must stay empty: it ends every probe.
        if (2 * at + 2 === table.length) break;
        table[2 * at] = old[s]!;
        table[2 * at + 1] = old[s + 1]!;
        next = at + 1;
      }
      if (s < old.length) continue;
      this.table = table;
      this.slots = slots;
      this.spill = room;
      this.scale = scale;
      this.limit = Math.floor(slots * MAX_LOAD);
      return;
    }
  }

  private home(hash: number): number {
    return homeIn(hash, this.scale);
  }

  private hashOf(lo: number, hi: number): number {
    return valueHash(lo, hi, this.seed);
  }
}

/**
 * Where the positions of a run in the chunk of `p` end, as a count of the run's positions: the loops
 * over a run step through a chunk's positions one by one, and follow the chain between chunks.
 */
function runStop(p: number, k: number, length: number): number {
  return Math.min(length, k + CHUNK - (p & (CHUNK - 1)));
}
