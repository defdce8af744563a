/**
 * The event index's structure and its mutations, below the event rules of `event-index.ts`:
 *
 * - the entries (`event-entries.ts`), each a (rank, engine hash) with its node, tiers and age;
 * - the lookups by engine hash and by node (`event-lookups.ts`);
 * - the leaf queue (`leaf-queue.ts`), the order the cap evicts in, and the inner entries' ages
 *   (`age-table.ts`);
 * - the ranks (`rank-table.ts`): a rank's `head` is its first root entry, its `count` its entries.
 *
 * Invariants: every entry's parent entry is live (a rank's holdings are prefix-closed, so removal
 * takes a subtree); an entry is queued if and only if it is a leaf; a node exists while an entry
 * holds it. A rank is released when its last entry goes, unless an event holds it (`hold`).
 */
import { AgeTable } from "./age-table";
import { NONE } from "./arrays";
import {
  AGE,
  ENGINE,
  ENTRY_WORDS,
  EventEntries,
  FIRST_CHILD,
  META,
  NEXT_HOLDER,
  NEXT_SIB,
  LOCAL,
  PATH,
  PREV_SIB,
  RANK_MASK,
  TIER_SHIFT,
  UNDER_ROOT,
} from "./event-entries";
import { EventLookups } from "./event-lookups";
import { LeafQueue } from "./leaf-queue";
import { PathHasher } from "./path-hash";
import { RankTable } from "./rank-table";

export class EventTree {
  readonly entries: EventEntries;
  readonly ranks = new RankTable();
  readonly queue: LeafQueue;
  readonly ages = new AgeTable();
  readonly hasher: PathHasher;
  readonly lookups: EventLookups;

  constructor(seed: number, initialEntries: number, maxEntries: number) {
    const entries = new EventEntries(initialEntries, maxEntries);
    this.entries = entries;
    this.queue = new LeafQueue(entries);
    this.hasher = new PathHasher();
    this.lookups = new EventLookups(entries, seed, initialEntries);
  }

  get bytes(): number {
    return this.entries.bytes + this.lookups.bytes + this.ranks.bytes + this.queue.bytes + this.ages.bytes;
  }

  /** The age of entry `e`: the latest `at` of the stores that named it (epoch ms). */
  ageOf(e: number): number {
    const word = this.entries.words[e * ENTRY_WORDS + AGE]!;
    return word < 0 ? this.queue.ageOf(e) : this.ages.ageOf(word);
  }

  /** Whether entry `e` is at the node of path (`lo`, `hi`). */
  isAt(e: number, lo: number, hi: number): boolean {
    const w = this.entries.words;
    return w[e * ENTRY_WORDS + PATH] === lo && w[e * ENTRY_WORDS + PATH + 1] === hi;
  }

  /** The path of entry `e`'s node, low word (`k` 0) or high word (`k` 1). */
  pathWord(e: number, k: 0 | 1): number {
    return this.entries.words[e * ENTRY_WORDS + PATH + k]!;
  }

  /** Keeps rank `r` while an event works on it, even if it loses every entry meanwhile. */
  hold(r: number): void {
    this.ranks.count[r]!++;
  }

  unhold(r: number): void {
    if (--this.ranks.count[r]! === 0) this.ranks.release(r);
  }

  /**
   * A new leaf entry of rank `r` for engine hash (`lo`, `hi`) at node `path`, with tier bit `bit`
   * and age `at`, under entry `parent` (-1: under the rank's root).
   */
  create(
    r: number,
    parent: number,
    lo: number,
    hi: number,
    pathLo: number,
    pathHi: number,
    localLo: number,
    localHi: number,
    bit: number,
    at: number,
  ) {
    const { entries, ranks } = this;
    const e = entries.allocate();
    const w = entries.words;
    const o = e * ENTRY_WORDS;
    w[o + META] = r | (bit << TIER_SHIFT);
    w[o + ENGINE] = lo;
    w[o + ENGINE + 1] = hi;
    w[o + PATH] = pathLo;
    w[o + PATH + 1] = pathHi;
    w[o + LOCAL] = localLo;
    w[o + LOCAL + 1] = localHi;
    w[o + FIRST_CHILD] = NONE;
    // Queued before its parent leaves the queue, so a run's age group never empties on the way.
    this.queue.join(e, at);
    // Every holder of a node hangs from a holder of its parent's node: under a childless sole
    // holder, as every block of a new tail is, the node is new without a probe of the path table.
    const fresh =
      parent !== NONE &&
      w[parent * ENTRY_WORDS + FIRST_CHILD] === NONE &&
      w[parent * ENTRY_WORDS + NEXT_HOLDER] === parent;
    let first: number;
    if (parent === NONE) {
      first = ranks.head[r]!;
      ranks.head[r] = e;
      w[o + PREV_SIB] = UNDER_ROOT;
    } else {
      first = w[parent * ENTRY_WORDS + FIRST_CHILD]!;
      if (first === NONE) this.makeInner(parent);
      w[parent * ENTRY_WORDS + FIRST_CHILD] = e;
      w[o + PREV_SIB] = -2 - parent;
    }
    w[o + NEXT_SIB] = first;
    if (first !== NONE) w[first * ENTRY_WORDS + PREV_SIB] = e;
    this.lookups.add(e, fresh);
    ranks.count[r]!++;
    return e;
  }

  /** Adds tier bit `bit` to entry `e` and makes its age `at` if that is later. */
  refresh(e: number, bit: number, at: number): void {
    const w = this.entries.words;
    const o = e * ENTRY_WORDS;
    w[o + META] = w[o + META]! | (bit << TIER_SHIFT);
    const word = w[o + AGE]!;
    if (word >= 0) {
      if (at > this.ages.ageOf(word)) {
        w[o + AGE] = this.ages.intern(at);
        this.ages.release(word);
      }
    } else if (at > this.queue.ageOf(e)) {
      this.queue.leave(e);
      this.queue.join(e, at);
    }
  }

  /** Clears tier bit `bit` of entry `e`; returns the tiers left. */
  clearTier(e: number, bit: number): number {
    const w = this.entries.words;
    const o = e * ENTRY_WORDS;
    w[o + META] = w[o + META]! & ~(bit << TIER_SHIFT);
    return w[o + META]! >>> TIER_SHIFT;
  }

  /** Removes entry `e` and every entry below it on its rank; returns how many. */
  removeSubtree(e: number): number {
    const w = this.entries.words;
    let removed = 0;
    let x = e;
    for (;;) {
      for (let c = w[x * ENTRY_WORDS + FIRST_CHILD]!; c !== NONE; c = w[c * ENTRY_WORDS + FIRST_CHILD]!)
        x = c;
      if (x === e) break;
      // A leaf reached through first children is its parent's first child.
      const parent = -2 - w[x * ENTRY_WORDS + PREV_SIB]!;
      const next = w[x * ENTRY_WORDS + NEXT_SIB]!;
      w[parent * ENTRY_WORDS + FIRST_CHILD] = next;
      if (next !== NONE) w[next * ENTRY_WORDS + PREV_SIB] = -2 - parent;
      // An inner entry left childless here is not queued: it goes too.
      this.release(x);
      removed++;
      x = parent;
    }
    this.unlink(e);
    this.release(e);
    return removed + 1;
  }

  /** Removes leaf `e` (the cap's victim); returns nothing, as it is always one entry. */
  removeLeaf(e: number): void {
    this.unlink(e);
    this.release(e);
  }

  /** Takes `e` out of its parent's children (or the rank's roots); a parent left childless is queued. */
  private unlink(e: number): void {
    const w = this.entries.words;
    const o = e * ENTRY_WORDS;
    const prev = w[o + PREV_SIB]!;
    const next = w[o + NEXT_SIB]!;
    if (next !== NONE) w[next * ENTRY_WORDS + PREV_SIB] = prev;
    if (prev >= 0) {
      w[prev * ENTRY_WORDS + NEXT_SIB] = next;
    } else if (prev === UNDER_ROOT) {
      this.ranks.head[w[o + META]! & RANK_MASK] = next;
    } else {
      const parent = -2 - prev;
      w[parent * ENTRY_WORDS + FIRST_CHILD] = next;
      if (next === NONE) {
        const id = w[parent * ENTRY_WORDS + AGE]!;
        const age = this.ages.ageOf(id);
        this.ages.release(id);
        this.queue.join(parent, age);
      }
    }
  }

  /** Frees entry `e`'s record and everything that names it except its tree links. */
  private release(e: number): void {
    const { entries, ranks } = this;
    const w = entries.words;
    const o = e * ENTRY_WORDS;
    const r = w[o + META]! & RANK_MASK;
    this.lookups.remove(e);
    const word = w[o + AGE]!;
    if (word < 0) this.queue.leave(e);
    else this.ages.release(word);
    entries.free(e);
    if (--ranks.count[r]! === 0) ranks.release(r);
  }

  /** Entry `e` gains its first child: out of the queue, its age kept as an age-table id. */
  private makeInner(e: number): void {
    const age = this.queue.leave(e);
    this.entries.words[e * ENTRY_WORDS + AGE] = this.ages.intern(age);
  }
}
