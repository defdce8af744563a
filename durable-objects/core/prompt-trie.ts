/**
 * The prompt-membership trie of one tracker: every live prompt is a root path of block hashes, and
 * every segment of the trie records which ranks have a live request through it and how many. It
 * answers the two questions the loads need without looking at individual requests:
 *
 * - `overlapDepths`: for every rank, the longest prefix of a query that is a prefix of one of the
 *   rank's live prompts (Dynamo's overlap depth), in time proportional to the query length plus the
 *   ranks it reports;
 * - `blocks(rank)`: the number of distinct hash values over the rank's live prompts, kept exact
 *   incrementally. Real chained hashes give every position its own value, but a client may send one
 *   value at many positions (at two depths, or under many parents), so a rank gains a block only when
 *   it covers the first position of that value, and loses it with the last.
 *
 * It is a radix trie: a run of blocks without a branch is one *segment*, so a family's shared prefix
 * costs one record and one coverage entry per rank, not one per block, and a request's own tail is one
 * segment whose hashes sit contiguously in a {@link BlockPool}. Every structure is typed arrays
 * recycled through free lists: no object, string or bigint per block, and none per operation.
 * A value found at several positions is counted through `ValueGroups` (a rare, input-driven path),
 * so every step stays O(1) expected per block however often a value repeats. Segments are split where
 * prompts diverge and never merged back: a path keeps at most one segment per block.
 */
import { BlockPool } from "./block-pool";
import { RankCover } from "./rank-cover";
import {
  COUNT,
  FIRST_HI,
  FIRST_LO,
  LEN,
  MULTI,
  NONE,
  PARENT,
  RANK,
  ROOT,
  SegmentTable,
  START,
  STRIDE,
} from "./trie-segments";
import { ValueGroups } from "./value-groups";
import { ValueIndex } from "./value-index";

export class PromptTrie {
  private pool!: BlockPool;
  private segments!: SegmentTable;
  private cover!: RankCover;
  private groups!: ValueGroups;
  /** Distinct-hash count per rank id. */
  private blockCounts = new Int32Array(16);
  /** Scratch for `overlapDepths`: (segment, depth) pairs along the query's path. */
  private path = new Int32Array(64);

  constructor(
    private readonly initialCapacity = 1024,
    private readonly seed = randomSeed(),
  ) {
    this.reset();
  }

  /** Distinct hashes over the live prompts on `rank`. */
  blocks(rank: number): number {
    return rank < this.blockCounts.length ? this.blockCounts[rank]! : 0;
  }

  /** Blocks stored (positions in use), for tests and memory figures. */
  get size(): number {
    return this.pool.live;
  }

  /** Storage chunks in use, for leak tests. */
  get chunks(): number {
    return this.pool.chunks;
  }

  /**
   * Adds a live prompt on `rank`; `words` holds its hashes as little-endian u32 pairs.
   * @returns the segment where the prompt ends (the root for an empty prompt), which {@link remove}
   *   takes back. A later split keeps that id on the part that ends where the prompt ends.
   */
  insert(words: Uint32Array, rank: number): number {
    this.ensureRank(rank);
    const length = words.length >> 1;
    let seg = ROOT;
    let i = 0;
    while (i < length) {
      const child = this.segments.find(seg, words[2 * i]!, words[2 * i + 1]!);
      if (child === NONE) return this.coverNew(seg, words, i, rank);
      const matched = this.match(child, words, i);
      i += matched;
      if (matched < this.segments.data[child * STRIDE + LEN]!) {
        const head = this.split(child, matched);
        this.coverSegment(head, rank);
        return i === length ? head : this.coverNew(head, words, i, rank);
      }
      this.coverSegment(child, rank);
      seg = child;
    }
    return seg;
  }

  /** Removes one live prompt on `rank` that {@link insert} ended at `leaf`. */
  remove(leaf: number, rank: number): void {
    let seg = leaf;
    while (seg !== ROOT) {
      const parent = this.segments.data[seg * STRIDE + PARENT]!;
      this.uncoverSegment(seg, rank);
      if (this.segments.data[seg * STRIDE + RANK] === NONE) this.release(seg);
      seg = parent;
    }
  }

  /** The hashes of the prompt ending at `leaf`, root first. */
  prompt(leaf: number): BigUint64Array {
    const d = this.segments.data;
    let length = 0;
    for (let seg = leaf; seg !== ROOT; seg = d[seg * STRIDE + PARENT]!) length += d[seg * STRIDE + LEN]!;
    const out = new BigUint64Array(length);
    const words = new Uint32Array(out.buffer);
    const pool = this.pool;
    for (let seg = leaf; seg !== ROOT; seg = d[seg * STRIDE + PARENT]!) {
      const len = d[seg * STRIDE + LEN]!;
      length -= len;
      let p = d[seg * STRIDE + START]!;
      for (let k = 0; k < len; k++) {
        if (k > 0) p = pool.after(p);
        words[2 * (length + k)] = pool.words[2 * p]!;
        words[2 * (length + k) + 1] = pool.words[2 * p + 1]!;
      }
    }
    return out;
  }

  /**
   * Sets `depths[rank]` to the overlap depth of the query on every rank with any overlap; ranks
   * with none are left untouched (the caller zeroes the array first).
   *
   * The ranks covering a segment include those covering its children. So, walking the query's path
   * back from its deepest segment, a rank's first sighting gives its depth, and a segment with as many
   * ranks as the one below it has the same ranks and is skipped without listing them: the work is the
   * query's length plus the ranks reported, not their product.
   */
  overlapDepths(words: Uint32Array, depths: Int32Array): void {
    const d = this.segments.data;
    const length = words.length >> 1;
    let steps = 0;
    let seg = ROOT;
    let i = 0;
    while (i < length) {
      const child = this.segments.find(seg, words[2 * i]!, words[2 * i + 1]!);
      if (child === NONE) break;
      const matched = this.match(child, words, i);
      i += matched;
      if (2 * steps + 2 > this.path.length) this.growPath();
      this.path[2 * steps] = child;
      this.path[2 * steps + 1] = i;
      steps++;
      if (matched < d[child * STRIDE + LEN]!) break;
      seg = child;
    }
    let seen = 0;
    for (let step = steps - 1; step >= 0; step--) {
      const at = this.path[2 * step]!;
      const depth = this.path[2 * step + 1]!;
      const rank = d[at * STRIDE + RANK]!;
      const ranks = rank === MULTI ? d[at * STRIDE + COUNT]! : 1;
      if (ranks === seen) continue;
      seen = ranks;
      if (rank !== MULTI) {
        if (depths[rank] === 0) depths[rank] = depth;
        continue;
      }
      for (let e = this.cover.first(at); e !== NONE; e = this.cover.nextOf(e)) {
        const r = this.cover.rankOf(e);
        if (depths[r] === 0) depths[r] = depth;
      }
    }
  }

  /** Drops every segment and block (the tracker was deleted). */
  clear(): void {
    this.reset();
  }

  private reset(): void {
    this.pool = new BlockPool(this.initialCapacity);
    this.cover = new RankCover();
    this.segments = new SegmentTable(this.seed, (capacity) => this.cover.ensureSegments(capacity));
    this.groups = new ValueGroups(
      this.pool,
      new ValueIndex(this.seed, this.initialCapacity),
      this.segments,
      this.cover,
    );
    this.blockCounts.fill(0);
  }

  /** How many blocks of `seg`, from its first, equal the query's from block `i` (≥ 1: the first matched by key). */
  private match(seg: number, words: Uint32Array, i: number): number {
    const len = this.segments.data[seg * STRIDE + LEN]!;
    const limit = Math.min(len, (words.length >> 1) - i);
    const pool = this.pool;
    const w = pool.words;
    let p = this.segments.data[seg * STRIDE + START]!;
    let k = 1;
    while (k < limit) {
      p = pool.after(p);
      const j = 2 * (i + k);
      if (w[2 * p] !== words[j] || w[2 * p + 1] !== words[j + 1]) break;
      k++;
    }
    return k;
  }

  /** A new segment under `parent` holding the query's blocks from `from` on, covered by `rank`. */
  private coverNew(parent: number, words: Uint32Array, from: number, rank: number): number {
    const length = (words.length >> 1) - from;
    const seg = this.segments.allocate();
    const start = this.pool.allocate(length, seg);
    const d = this.segments.data;
    const s = seg * STRIDE;
    d[s + PARENT] = parent;
    d[s + START] = start;
    d[s + LEN] = length;
    d[s + RANK] = NONE;
    d[s + COUNT] = 0;
    d[s + FIRST_LO] = words[2 * from]!;
    d[s + FIRST_HI] = words[2 * from + 1]!;
    this.segments.link(seg);
    const pool = this.pool;
    const w = pool.words;
    let p = start;
    for (let k = 0; k < length; k++) {
      if (k > 0) p = pool.after(p);
      w[2 * p] = words[2 * (from + k)]!;
      w[2 * p + 1] = words[2 * (from + k) + 1]!;
      this.groups.place(p, seg);
    }
    this.coverSegment(seg, rank);
    return seg;
  }

  /**
   * Cuts `seg` after its first `k` blocks. The head gets a new id and takes `seg`'s place under its
   * parent; the tail keeps the id, so its children and the requests ending at it need no update.
   * Both parts have `seg`'s coverage: every prompt through `seg` ran through all of it. The smaller
   * part moves to chunks of its own, so that every chunk keeps a single owner.
   */
  private split(seg: number, k: number): number {
    const head = this.segments.allocate();
    const d = this.segments.data;
    const s = seg * STRIDE;
    const h = head * STRIDE;
    const pool = this.pool;
    const start = d[s + START]!;
    const len = d[s + LEN]!;
    const last = pool.advance(start, k - 1);
    const tail = pool.after(last);
    const headShared = this.groups.countSharedIn(start, k, seg);
    d[h + PARENT] = d[s + PARENT]!;
    d[h + LEN] = k;
    d[h + RANK] = d[s + RANK]!;
    d[h + COUNT] = d[s + COUNT]!;
    d[h + FIRST_LO] = d[s + FIRST_LO]!;
    d[h + FIRST_HI] = d[s + FIRST_HI]!;
    if (d[s + RANK] === MULTI) this.cover.copy(seg, head);
    this.segments.replace(seg, head);
    d[s + PARENT] = head;
    d[s + LEN] = len - k;
    d[s + FIRST_LO] = pool.words[2 * tail]!;
    d[s + FIRST_HI] = pool.words[2 * tail + 1]!;
    this.segments.link(seg);
    if (k <= len - k) {
      d[h + START] = this.moveRun(start, k, seg, head);
      d[s + START] = tail;
      pool.trimFront(start, k);
    } else {
      d[h + START] = start;
      d[s + START] = this.moveRun(tail, len - k, seg, seg);
      pool.relabel(start, k, head);
      pool.trim(last, len - k);
    }
    this.segments.sharedIn[head] = headShared;
    this.segments.sharedIn[seg]! -= headShared;
    return head;
  }

  /** Copies `length` blocks of `from` (starting at `start`) to a new run owned by `to`; returns its start. */
  private moveRun(start: number, length: number, from: number, to: number): number {
    const pool = this.pool;
    const target = pool.allocate(length, to);
    pool.live -= length;
    const w = pool.words;
    let p = start;
    let q = target;
    for (let k = 0; k < length; k++) {
      if (k > 0) {
        p = pool.after(p);
        q = pool.after(q);
      }
      w[2 * q] = w[2 * p]!;
      w[2 * q + 1] = w[2 * p + 1]!;
      this.groups.move(p, q, from);
    }
    return target;
  }

  /** Frees a segment no rank covers (its children are gone already: they were covered no more than it). */
  private release(seg: number): void {
    const d = this.segments.data;
    const start = d[seg * STRIDE + START]!;
    const len = d[seg * STRIDE + LEN]!;
    this.segments.unlink(seg);
    let p = start;
    for (let k = 0; k < len; k++) {
      if (k > 0) p = this.pool.after(p);
      this.groups.drop(p, seg);
    }
    this.pool.release(start, len);
    this.segments.free(seg);
  }

  private coverSegment(seg: number, rank: number): void {
    const d = this.segments.data;
    const s = seg * STRIDE;
    const single = d[s + RANK]!;
    if (single === rank) {
      d[s + COUNT]!++;
      return;
    }
    if (single === NONE) {
      d[s + RANK] = rank;
      d[s + COUNT] = 1;
    } else if (single === MULTI) {
      if (this.cover.add(seg, rank, 1) > 1) return;
      d[s + COUNT]!++;
    } else {
      this.cover.add(seg, single, d[s + COUNT]!);
      this.cover.add(seg, rank, 1);
      d[s + RANK] = MULTI;
      d[s + COUNT] = 2;
    }
    this.countBlocks(seg, rank, 1);
  }

  private uncoverSegment(seg: number, rank: number): void {
    const d = this.segments.data;
    const s = seg * STRIDE;
    if (d[s + RANK] === MULTI) {
      if (this.cover.add(seg, rank, -1) > 0) return;
      if (--d[s + COUNT]! === 1) {
        // One rank is left: its count moves back inline.
        const last = this.cover.first(seg);
        const only = this.cover.rankOf(last);
        const count = this.cover.countOf(last);
        this.cover.add(seg, only, -count);
        d[s + RANK] = only;
        d[s + COUNT] = count;
      }
    } else if (--d[s + COUNT]! > 0) {
      return;
    } else {
      d[s + RANK] = NONE;
    }
    this.countBlocks(seg, rank, -1);
  }

  /** `rank` started (1) or stopped (−1) covering `seg`: a block per value it alone brings. */
  private countBlocks(seg: number, rank: number, sign: 1 | -1): void {
    const shared = this.segments.sharedIn[seg]!;
    let delta = sign * (this.segments.data[seg * STRIDE + LEN]! - shared);
    if (shared > 0) delta += this.groups.countShared(seg, rank, sign);
    this.blockCounts[rank]! += delta;
  }

  private ensureRank(rank: number): void {
    if (rank < this.blockCounts.length) return;
    const next = new Int32Array(Math.max(rank + 1, this.blockCounts.length * 2));
    next.set(this.blockCounts);
    this.blockCounts = next;
  }

  private growPath(): void {
    const next = new Int32Array(this.path.length * 2);
    next.set(this.path);
    this.path = next;
  }
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}
