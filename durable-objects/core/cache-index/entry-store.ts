/**
 * The index's entries: one per (block, rank) held, in typed arrays (the block, the rank, the deadline
 * group) and linked into three lists at once: the block's holders (the overlap walk), the rank's
 * entries (worker and rank removal) and the deadline group's entries (expiry and eviction). A hash
 * set over (block, rank) finds an entry again when a booking renews it. 36 bytes an entry plus its
 * hash slot. Removing an entry releases whatever it was the last of: its block, rank or group.
 */
import type { BlockTable } from "./block-table";
import type { DeadlineGroups } from "./deadline-groups";
import { finish, IdTable, mix } from "./id-table";
import { grown, Links, NONE, nextCapacity } from "./links";
import type { RankTable } from "./rank-table";

export class EntryStore {
  block: Int32Array;
  rank: Int32Array;
  group: Int32Array;
  readonly byBlock: Links;
  readonly byRank: Links;
  readonly byGroup: Links;
  capacity: number;
  size = 0;
  private table: IdTable;
  private used = 0;
  /** Free ids, chained through `block`. */
  private freeHead = NONE;

  constructor(
    private readonly blocks: BlockTable,
    private readonly ranks: RankTable,
    private readonly groups: DeadlineGroups,
    private readonly seed: number,
    initialCapacity = 1024,
  ) {
    this.capacity = initialCapacity;
    this.block = new Int32Array(initialCapacity);
    this.rank = new Int32Array(initialCapacity);
    this.group = new Int32Array(initialCapacity);
    this.byBlock = new Links(initialCapacity);
    this.byRank = new Links(initialCapacity);
    this.byGroup = new Links(initialCapacity);
    this.table = new IdTable((e) => this.hashOf(this.block[e]!, this.rank[e]!), initialCapacity);
  }

  /** The entry of block `b` on rank `r`, or -1. */
  find(b: number, r: number): number {
    const table = this.table;
    for (let s = table.home(this.hashOf(b, r)); ; s = table.next(s)) {
      const e = table.at(s);
      if (e === NONE || (this.block[e] === b && this.rank[e] === r)) return e;
    }
  }

  /** A new entry of block `b` on rank `r` in group `g`; there must be none yet. */
  add(b: number, r: number, g: number): number {
    const table = this.table;
    let s = table.home(this.hashOf(b, r));
    while (table.at(s) !== NONE) s = table.next(s);
    const e = this.allocate();
    this.block[e] = b;
    this.rank[e] = r;
    this.group[e] = g;
    table.fill(s, e);
    this.byBlock.push(this.blocks.head, b, e);
    this.byRank.push(this.ranks.head, r, e);
    this.byGroup.push(this.groups.head, g, e);
    this.ranks.count[r]!++;
    this.groups.count[g]!++;
    return e;
  }

  /** Moves entry `e` to group `g` (a renewal); releases its old group if that empties. */
  moveTo(e: number, g: number): void {
    const old = this.group[e]!;
    const groups = this.groups;
    this.byGroup.unlink(groups.head, old, e);
    if (--groups.count[old]! === 0) groups.release(old);
    this.byGroup.push(groups.head, g, e);
    groups.count[g]!++;
    this.group[e] = g;
  }

  remove(e: number): void {
    const b = this.block[e]!;
    const r = this.rank[e]!;
    const g = this.group[e]!;
    this.table.delete(e);
    this.byBlock.unlink(this.blocks.head, b, e);
    if (this.blocks.head[b] === NONE) this.blocks.release(b);
    this.byRank.unlink(this.ranks.head, r, e);
    if (--this.ranks.count[r]! === 0) this.ranks.release(r);
    this.byGroup.unlink(this.groups.head, g, e);
    if (--this.groups.count[g]! === 0) this.groups.release(g);
    this.block[e] = this.freeHead;
    this.freeHead = e;
    this.size--;
  }

  get bytes(): number {
    return (
      this.block.byteLength +
      this.rank.byteLength +
      this.group.byteLength +
      this.byBlock.bytes +
      this.byRank.bytes +
      this.byGroup.bytes +
      this.table.bytes
    );
  }

  private allocate(): number {
    let e = this.freeHead;
    if (e !== NONE) this.freeHead = this.block[e]!;
    else {
      if (this.used === this.capacity) this.grow(nextCapacity(this.capacity));
      e = this.used++;
    }
    this.size++;
    return e;
  }

  private grow(capacity: number): void {
    this.block = grown(this.block, capacity);
    this.rank = grown(this.rank, capacity);
    this.group = grown(this.group, capacity);
    this.byBlock.grow(capacity);
    this.byRank.grow(capacity);
    this.byGroup.grow(capacity);
    this.capacity = capacity;
  }

  private hashOf(b: number, r: number): number {
    return finish(mix(mix(this.seed, b), r));
  }
}
