/**
 * An open-addressing hash set of small non-negative ids whose keys live elsewhere (in the owner's
 * typed arrays): one Int32Array of `id + 1` (0: empty), linear probing over a power-of-two table.
 * The owner probes it itself (`home`, `next`, `at`) and compares keys in its own arrays, so a lookup
 * allocates nothing. Deletion shifts back the displaced entries (Knuth's algorithm R), so there are
 * no tombstones and churn does not slow lookups; it needs each moved id's hash, from `hashOf`.
 */

/** Grow past this load factor; linear probing stays at a few probes below it. */
const MAX_LOAD = 0.75;

export class IdTable {
  private slots: Int32Array;
  private mask: number;
  private limit: number;
  size = 0;

  constructor(
    private readonly hashOf: (id: number) => number,
    initialSlots = 1024,
  ) {
    let n = 16;
    while (n < initialSlots) n *= 2;
    this.slots = new Int32Array(n);
    this.mask = n - 1;
    this.limit = Math.floor(n * MAX_LOAD);
  }

  /** The slot where probing for a key of hash `hash` (a well-mixed 32-bit value) starts. */
  home(hash: number): number {
    return hash & this.mask;
  }

  next(slot: number): number {
    return (slot + 1) & this.mask;
  }

  /** The id in `slot`, or -1 if it is empty (which ends a probe). */
  at(slot: number): number {
    return this.slots[slot]! - 1;
  }

  /**
   * Puts `id` in `slot`, the empty slot where a probe for its key ended. Slots move when the table
   * grows, so a slot found before this call is stale after it.
   */
  fill(slot: number, id: number): void {
    this.slots[slot] = id + 1;
    if (++this.size > this.limit) this.rehash(this.slots.length * 2);
  }

  /** Removes `id`, which must be present. */
  delete(id: number): void {
    const { slots, mask } = this;
    let hole = this.home(this.hashOf(id));
    while (slots[hole] !== id + 1) hole = (hole + 1) & mask;
    for (let j = (hole + 1) & mask; slots[j] !== 0; j = (j + 1) & mask) {
      const home = this.home(this.hashOf(slots[j]! - 1));
      // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      slots[hole] = slots[j]!;
      hole = j;
    }
    slots[hole] = 0;
    this.size--;
  }

  get bytes(): number {
    return this.slots.byteLength;
  }

  private rehash(length: number): void {
    const old = this.slots;
    this.slots = new Int32Array(length);
    this.mask = length - 1;
    this.limit = Math.floor(length * MAX_LOAD);
    for (let s = 0; s < old.length; s++) {
      const v = old[s]!;
      if (v === 0) continue;
      let slot = this.home(this.hashOf(v - 1));
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = v;
    }
  }
}

/** A seeded 32-bit finaliser (murmur3's fmix over a running state): spreads structured inputs. */
export function mix(h: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

export function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** A random table seed, so colliding keys cannot be crafted offline; it never changes an answer. */
export function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]! | 0;
}
