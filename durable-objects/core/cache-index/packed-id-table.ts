/**
 * An open-addressing hash set of ids in one int32 word per slot: the id (plus one, 0 marking an
 * empty slot) in the low 24 bits and 8 bits of its key's hash in the high ones. The event index
 * keeps two of these, one slot per entry in each at worst, and its budget is 64 bytes an entry: the
 * 8-byte slots of `IdTable` would cost it 6 of them. The price is that deletion and growth, which
 * need a displaced entry's home, read it from the owner's record (`hashOf`); the fragment spares
 * most lookups that read for slots of other keys.
 *
 * Linear probing, homes by fraction of 2^32 (sizes need not be powers of two), growth by half past
 * 75% load, deletion by backward shift (Knuth's algorithm R): as `IdTable`, whose probing interface
 * (`home`, `next`, `candidate`) this repeats so owners compare keys in their own records.
 */
import { EMPTY, OTHER } from "./id-table";

export { EMPTY, OTHER };

const MAX_LOAD = 0.75;
const TWO_32 = 2 ** 32;
const ID_MASK = 0xffffff;
/** Ids are below this: 24 bits hold `id + 1`. */
export const MAX_PACKED_IDS = ID_MASK;

export class PackedIdTable {
  private slots: Int32Array;
  private length: number;
  private scale: number;
  private limit: number;
  size = 0;

  constructor(
    /** The hash of the key of `id`, read from the owner's record. */
    private readonly hashOf: (id: number) => number,
    initialSlots = 1024,
  ) {
    this.length = Math.max(16, Math.ceil(initialSlots));
    this.slots = new Int32Array(this.length);
    this.scale = this.length / TWO_32;
    this.limit = Math.floor(this.length * MAX_LOAD);
  }

  home(hash: number): number {
    return ((hash >>> 0) * this.scale) >>> 0;
  }

  next(slot: number): number {
    return slot + 1 === this.length ? 0 : slot + 1;
  }

  /** The id in `slot` if its hash fragment is `hash`'s, else {@link OTHER}, or {@link EMPTY}. */
  candidate(slot: number, hash: number): number {
    const v = this.slots[slot]!;
    if (v === 0) return EMPTY;
    // The fragment is the hash's low byte: the home is taken from its high bits.
    return v >>> 24 === (hash & 0xff) ? (v & ID_MASK) - 1 : OTHER;
  }

  /** Puts `id` in `slot`, the empty slot where a probe for its key ended (stale once the table grows). */
  fill(slot: number, id: number, hash: number): void {
    if (id >= MAX_PACKED_IDS) throw new RangeError(`id ${id} does not fit a packed slot`);
    this.slots[slot] = ((hash & 0xff) << 24) | (id + 1);
    if (++this.size > this.limit) this.rehash(Math.ceil(this.length * 1.5));
  }

  /** The id in occupied `slot`. */
  idAt(slot: number): number {
    return (this.slots[slot]! & ID_MASK) - 1;
  }

  /** Puts `id` in place of the id in `slot`, whose key it shares (another holder of one node). */
  replace(slot: number, id: number): void {
    this.slots[slot] = (this.slots[slot]! & ~ID_MASK) | (id + 1);
  }

  /** The slot holding `id`, whose key's hash is `hash`; it must be present. */
  slotOf(id: number, hash: number): number {
    let s = this.home(hash);
    while ((this.slots[s]! & ID_MASK) !== id + 1) s = this.next(s);
    return s;
  }

  /** Empties `slot`, shifting back the entries after it that may fill the hole. */
  deleteAt(slot: number): void {
    const slots = this.slots;
    let hole = slot;
    for (let j = this.next(hole); slots[j] !== 0; j = this.next(j)) {
      const home = this.home(this.hashOf((slots[j]! & ID_MASK) - 1));
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

  /**
   * Re-places every id in a table of `length` slots, in ascending id order: the ids are marked in a
   * bitmap (an eighth of a byte an id, so it stays in cache) and their records read in order, not
   * at random in slot order. Reading each record's hash was most of the cost of growing.
   */
  private rehash(length: number): void {
    const old = this.slots;
    let maxId = 0;
    for (let s = 0; s < old.length; s++) if ((old[s]! & ID_MASK) > maxId) maxId = old[s]! & ID_MASK;
    const marks = new Int32Array((maxId >>> 5) + 1);
    for (let s = 0; s < old.length; s++) {
      const v = old[s]!;
      if (v === 0) continue;
      const id = (v & ID_MASK) - 1;
      marks[id >>> 5] = marks[id >>> 5]! | (1 << (id & 31));
    }
    this.length = length;
    this.slots = new Int32Array(length);
    this.scale = length / TWO_32;
    this.limit = Math.floor(length * MAX_LOAD);
    const slots = this.slots;
    for (let k = 0; k < marks.length; k++) {
      for (let bits = marks[k]!; bits !== 0; bits &= bits - 1) {
        const id = (k << 5) | (31 - Math.clz32(bits & -bits));
        const hash = this.hashOf(id);
        let slot = this.home(hash);
        while (slots[slot] !== 0) slot = this.next(slot);
        slots[slot] = ((hash & 0xff) << 24) | (id + 1);
      }
    }
  }
}
