/**
 * Per-rank request counts of the trie segments that two or more ranks cover (a segment covered by
 * one rank keeps its count inline). Entries live in one Int32Array, found by (segment, rank) through
 * hashed chains and listed per segment in a doubly linked list, so lookup, insert and delete are O(1)
 * and a segment's ranks are enumerated without scanning every rank. Entries are recycled: turning a
 * segment shared and back allocates nothing.
 */

const NONE = -1;
const SEG = 0;
const RANK = 1;
const COUNT = 2;
/** Next entry in the hash chain (free entries: next free entry). */
const CHAIN = 3;
const NEXT = 4;
const PREV = 5;
const STRIDE = 6;

export class RankCover {
  private entries = new Int32Array(16 * STRIDE);
  private buckets = new Int32Array(16).fill(NONE);
  /** First entry of each segment's list. */
  private headOf = new Int32Array(0);
  private used = 0;
  private live = 0;
  private freeHead = NONE;

  /** Makes room for segment ids below `segments`. */
  ensureSegments(segments: number): void {
    if (segments <= this.headOf.length) return;
    const next = new Int32Array(segments).fill(NONE);
    next.set(this.headOf);
    this.headOf = next;
  }

  /** The first entry of `seg`'s list, or -1; walk on with {@link nextOf}. */
  first(seg: number): number {
    return this.headOf[seg]!;
  }

  nextOf(entry: number): number {
    return this.entries[entry * STRIDE + NEXT]!;
  }

  rankOf(entry: number): number {
    return this.entries[entry * STRIDE + RANK]!;
  }

  countOf(entry: number): number {
    return this.entries[entry * STRIDE + COUNT]!;
  }

  /** Adds `delta` to (seg, rank), creating or deleting the entry as it leaves or reaches 0; returns the new count. */
  add(seg: number, rank: number, delta: number): number {
    const e = this.entries;
    const b = bucketOf(seg, rank) & (this.buckets.length - 1);
    let prev = NONE;
    let entry = this.buckets[b]!;
    while (entry !== NONE && (e[entry * STRIDE + SEG] !== seg || e[entry * STRIDE + RANK] !== rank)) {
      prev = entry;
      entry = e[entry * STRIDE + CHAIN]!;
    }
    if (entry === NONE) {
      if (delta > 0) this.create(seg, rank, delta);
      return delta;
    }
    const count = e[entry * STRIDE + COUNT]! + delta;
    if (count > 0) {
      e[entry * STRIDE + COUNT] = count;
      return count;
    }
    if (prev === NONE) this.buckets[b] = e[entry * STRIDE + CHAIN]!;
    else e[prev * STRIDE + CHAIN] = e[entry * STRIDE + CHAIN]!;
    this.unlist(entry);
    e[entry * STRIDE + CHAIN] = this.freeHead;
    this.freeHead = entry;
    this.live--;
    return 0;
  }

  /** Copies every (from, rank) count to (to, rank); `to` has none. */
  copy(from: number, to: number): void {
    for (let entry = this.headOf[from]!; entry !== NONE; entry = this.nextOf(entry)) {
      this.create(to, this.rankOf(entry), this.countOf(entry));
    }
  }

  /** Drops everything (the tracker was deleted). */
  clear(): void {
    this.entries = new Int32Array(16 * STRIDE);
    this.buckets = new Int32Array(16).fill(NONE);
    this.headOf.fill(NONE);
    this.used = 0;
    this.live = 0;
    this.freeHead = NONE;
  }

  private create(seg: number, rank: number, count: number): void {
    let entry = this.freeHead;
    if (entry !== NONE) this.freeHead = this.entries[entry * STRIDE + CHAIN]!;
    else {
      if ((this.used + 1) * STRIDE > this.entries.length) this.growEntries();
      entry = this.used++;
    }
    if (++this.live > this.buckets.length) this.rehash(this.buckets.length * 2);
    const e = this.entries;
    const base = entry * STRIDE;
    e[base + SEG] = seg;
    e[base + RANK] = rank;
    e[base + COUNT] = count;
    const b = bucketOf(seg, rank) & (this.buckets.length - 1);
    e[base + CHAIN] = this.buckets[b]!;
    this.buckets[b] = entry;
    const head = this.headOf[seg]!;
    e[base + NEXT] = head;
    e[base + PREV] = NONE;
    if (head !== NONE) e[head * STRIDE + PREV] = entry;
    this.headOf[seg] = entry;
  }

  private unlist(entry: number): void {
    const e = this.entries;
    const next = e[entry * STRIDE + NEXT]!;
    const prev = e[entry * STRIDE + PREV]!;
    if (prev === NONE) this.headOf[e[entry * STRIDE + SEG]!] = next;
    else e[prev * STRIDE + NEXT] = next;
    if (next !== NONE) e[next * STRIDE + PREV] = prev;
  }

  private growEntries(): void {
    const next = new Int32Array(this.entries.length * 2);
    next.set(this.entries);
    this.entries = next;
  }

  /** Rebuilds the chains over the listed (live) entries; the free list is unaffected. */
  private rehash(size: number): void {
    const e = this.entries;
    this.buckets = new Int32Array(size).fill(NONE);
    for (let seg = 0; seg < this.headOf.length; seg++) {
      for (let entry = this.headOf[seg]!; entry !== NONE; entry = e[entry * STRIDE + NEXT]!) {
        const b = bucketOf(seg, e[entry * STRIDE + RANK]!) & (size - 1);
        e[entry * STRIDE + CHAIN] = this.buckets[b]!;
        this.buckets[b] = entry;
      }
    }
  }
}

function bucketOf(seg: number, rank: number): number {
  const h = Math.imul(seg ^ Math.imul(rank, 0x9e3779b1), 0x85ebca6b);
  return (h ^ (h >>> 15)) >>> 0;
}
