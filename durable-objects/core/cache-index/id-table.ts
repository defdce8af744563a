/**
 * An open-addressing hash set of small non-negative ids whose keys live elsewhere (in the owner's
 * records): linear probing over one Int32Array of (`id + 1`, key hash) pairs, 0 marking an empty
 * slot. The owner probes it itself (`home`, `next`, `candidate`) and compares keys in its own
 * records, so a lookup allocates nothing, and only a slot whose hash matches sends it to a record.
 *
 * The hash in the slot is what keeps the table off the owner's records everywhere else: deletion
 * shifts back the displaced entries (Knuth's algorithm R, so no tombstones, and churn does not slow
 * lookups) and growth re-places every entry, and both need each entry's home. Reading it from the
 * owner's record cost a random memory access per entry of the rest of the probe run: with a slot
 * of id alone, deletions took two thirds of an index's time at its cap.
 *
 * A hash's home is its fraction of 2^32 scaled to the table, so sizes need not be powers of two and
 * the table grows by half (between 50% and 75% full), as the prompt index's `ValueIndex` does.
 */

/** Grow past this load factor; linear probing stays at a few probes below it. */
const MAX_LOAD = 0.75;
const TWO_32 = 2 ** 32;
/** `candidate` of an empty slot, which ends a probe. */
export const EMPTY = -1;
/** `candidate` of a slot holding another key (by its hash): probing goes on. */
export const OTHER = -2;

export class IdTable {
  private slots: Int32Array;
  private length: number;
  /** `length / 2^32`: a hash's home is `hash × scale`, truncated. */
  private scale: number;
  private limit: number;
  size = 0;

  constructor(initialSlots = 1024) {
    this.length = Math.max(16, initialSlots);
    this.slots = new Int32Array(2 * this.length);
    this.scale = this.length / TWO_32;
    this.limit = Math.floor(this.length * MAX_LOAD);
  }

  /** The slot where probing for a key of hash `hash` (a well-mixed 32-bit value) starts. */
  home(hash: number): number {
    return ((hash >>> 0) * this.scale) >>> 0;
  }

  /**
   * The first word of the slot where probing for `hash` starts: reading it brings the slot's line
   * into cache ahead of the probe. Reads of many independent slots overlap in the memory system,
   * where the probes themselves, each waiting on its own line, would take one miss after another.
   */
  touch(hash: number): number {
    return this.slots[2 * this.home(hash)]!;
  }

  next(slot: number): number {
    return slot + 1 === this.length ? 0 : slot + 1;
  }

  /** The id in `slot` if its hash is `hash`, else {@link OTHER}, or {@link EMPTY}. */
  candidate(slot: number, hash: number): number {
    const v = this.slots[2 * slot]!;
    if (v === 0) return EMPTY;
    return this.slots[2 * slot + 1] === hash ? v - 1 : OTHER;
  }

  /**
   * Puts `id` (of key hash `hash`) in `slot`, the empty slot where a probe for its key ended. Slots
   * move when the table grows, so a slot found before this call is stale after it.
   */
  fill(slot: number, id: number, hash: number): void {
    this.slots[2 * slot] = id + 1;
    this.slots[2 * slot + 1] = hash;
    if (++this.size > this.limit) this.rehash(Math.ceil(this.length * 1.5));
  }

  /** Removes `id`, of key hash `hash`, which must be present. */
  delete(id: number, hash: number): void {
    const slots = this.slots;
    let hole = this.home(hash);
    while (slots[2 * hole] !== id + 1) hole = this.next(hole);
    for (let j = this.next(hole); slots[2 * j] !== 0; j = this.next(j)) {
      const home = this.home(slots[2 * j + 1]!);
      // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      slots[2 * hole] = slots[2 * j]!;
      slots[2 * hole + 1] = slots[2 * j + 1]!;
      hole = j;
    }
    slots[2 * hole] = 0;
    this.size--;
  }

  get bytes(): number {
    return this.slots.byteLength;
  }

  private rehash(length: number): void {
    const old = this.slots;
    this.length = length;
    this.slots = new Int32Array(2 * length);
    this.scale = length / TWO_32;
    this.limit = Math.floor(length * MAX_LOAD);
    const slots = this.slots;
    for (let s = 0; s < old.length; s += 2) {
      if (old[s] === 0) continue;
      const hash = old[s + 1]!;
      let slot = this.home(hash);
      while (slots[2 * slot] !== 0) slot = this.next(slot);
      slots[2 * slot] = old[s]!;
      slots[2 * slot + 1] = hash;
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
