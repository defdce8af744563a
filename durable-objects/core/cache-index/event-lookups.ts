/**
 * The event index's two ways to an entry, both packed tables over the entries' records
 * (`packed-id-table.ts`), so neither keeps a key of its own:
 *
 * - by name: (rank, engine hash) → entry, how an event names a block;
 * - by node: path hash → one holder of the node, how a query finds a node. A node's holders are a
 *   ring through the entries' `NEXT_HOLDER` words, so any holder leads to all of them: the overlap
 *   walk finds the next node from a holder's first child, without the table, and adding a holder
 *   leaves the table alone. A node is in the table while some entry holds it.
 *
 * Removing a holder walks the ring to its predecessor: one step per entry holding the node, which
 * is short except for prefixes that many ranks share, and those are the last to go.
 */
import { NONE } from "./arrays";
import { ENGINE, ENTRY_WORDS, type EventEntries, META, NEXT_HOLDER, PATH, RANK_MASK } from "./event-entries";
import { EMPTY, finish, mix } from "./id-table";
import { PackedIdTable } from "./packed-id-table";

export class EventLookups {
  private readonly byName: PackedIdTable;
  private readonly byNode: PackedIdTable;

  constructor(
    private readonly entries: EventEntries,
    private readonly seed: number,
    initialEntries: number,
  ) {
    const slots = Math.ceil(initialEntries / 0.6);
    this.byName = new PackedIdTable((e) => {
      const w = entries.words;
      const o = e * ENTRY_WORDS;
      return this.nameKey(w[o + META]! & RANK_MASK, w[o + ENGINE]!, w[o + ENGINE + 1]!);
    }, slots);
    this.byNode = new PackedIdTable((e) => {
      const w = entries.words;
      return this.nodeKey(w[e * ENTRY_WORDS + PATH]!, w[e * ENTRY_WORDS + PATH + 1]!);
    }, slots);
  }

  /** Distinct nodes held. */
  get nodes(): number {
    return this.byNode.size;
  }

  get bytes(): number {
    return this.byName.bytes + this.byNode.bytes;
  }

  /** The entry of engine hash (`lo`, `hi`) on rank `r`, or -1. */
  findEntry(r: number, lo: number, hi: number): number {
    const table = this.byName;
    const w = this.entries.words;
    const hash = this.nameKey(r, lo, hi);
    for (let s = table.home(hash); ; s = table.next(s)) {
      const e = table.candidate(s, hash);
      if (e === EMPTY) return NONE;
      const o = e * ENTRY_WORDS;
      if (e >= 0 && w[o + ENGINE] === lo && w[o + ENGINE + 1] === hi && (w[o + META]! & RANK_MASK) === r) {
        return e;
      }
    }
  }

  /** A holder of the node at path (`lo`, `hi`), or -1. */
  findNode(lo: number, hi: number): number {
    const s = this.nodeSlot(lo, hi);
    return s === NONE ? NONE : this.byNode.idAt(s);
  }

  /** The path table's slot of the node at path (`lo`, `hi`), or -1. */
  private nodeSlot(lo: number, hi: number): number {
    const table = this.byNode;
    const w = this.entries.words;
    const hash = this.nodeKey(lo, hi);
    for (let s = table.home(hash); ; s = table.next(s)) {
      const e = table.candidate(s, hash);
      if (e === EMPTY) return NONE;
      if (e >= 0 && w[e * ENTRY_WORDS + PATH] === lo && w[e * ENTRY_WORDS + PATH + 1] === hi) return s;
    }
  }

  /**
   * Files new entry `e`, whose record is written, under its name and as a holder of its node;
   * `fresh` says its node is known to be new (no probe for it then).
   */
  add(e: number, fresh: boolean): void {
    const w = this.entries.words;
    const o = e * ENTRY_WORDS;
    const lo = w[o + PATH]!;
    const hi = w[o + PATH + 1]!;
    const first = fresh ? NONE : this.findNode(lo, hi);
    if (first === NONE) {
      w[o + NEXT_HOLDER] = e;
      fill(this.byNode, e, this.nodeKey(lo, hi));
    } else {
      w[o + NEXT_HOLDER] = w[first * ENTRY_WORDS + NEXT_HOLDER]!;
      w[first * ENTRY_WORDS + NEXT_HOLDER] = e;
    }
    fill(this.byName, e, this.nameKey(w[o + META]! & RANK_MASK, w[o + ENGINE]!, w[o + ENGINE + 1]!));
  }

  /** Forgets entry `e` under its name and as a holder of its node (its record still intact). */
  remove(e: number): void {
    const w = this.entries.words;
    const o = e * ENTRY_WORDS;
    const name = this.nameKey(w[o + META]! & RANK_MASK, w[o + ENGINE]!, w[o + ENGINE + 1]!);
    this.byName.deleteAt(this.byName.slotOf(e, name));
    const next = w[o + NEXT_HOLDER]!;
    const slot = this.nodeSlot(w[o + PATH]!, w[o + PATH + 1]!);
    if (next === e) {
      this.byNode.deleteAt(slot);
      return;
    }
    let h = next;
    while (w[h * ENTRY_WORDS + NEXT_HOLDER] !== e) h = w[h * ENTRY_WORDS + NEXT_HOLDER]!;
    w[h * ENTRY_WORDS + NEXT_HOLDER] = next;
    if (this.byNode.idAt(slot) === e) this.byNode.replace(slot, next);
  }

  private nameKey(r: number, lo: number, hi: number): number {
    return finish(mix(mix(mix(this.seed, lo), hi), r));
  }

  private nodeKey(lo: number, hi: number): number {
    return finish(mix(mix(this.seed ^ 0x68e31da4, lo), hi));
  }
}

/** Puts `e` in the first empty slot of its key's probe. */
function fill(table: PackedIdTable, e: number, hash: number): void {
  let s = table.home(hash);
  while (table.candidate(s, hash) !== EMPTY) s = table.next(s);
  table.fill(s, e, hash);
}
