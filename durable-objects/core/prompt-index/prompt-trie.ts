/**
 * The prompt index of one tracker, `core/prompt-index/`: this trie, whose parts are the other files
 * there. Every live prompt is a root path of block hashes; every segment records which ranks have a
 * live request through it and how many. It answers the loads' two questions without reading requests:
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
import { BlockPool, CHUNK } from "./block-pool";
import { RankCover } from "./rank-cover";
import { SegmentCoverage } from "./segment-coverage";
import { splitSegment, type TrieParts } from "./segment-split";
import {
  COUNT,
  FIRST_HI,
  FIRST_LO,
  LEN,
  MASK_HI,
  MASK_LO,
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
  private ranks!: RankCover;
  private groups!: ValueGroups;
  private coverage!: SegmentCoverage;
  /** The same parts, for `splitSegment`. */
  private parts!: TrieParts;
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
    return this.coverage.blocks(rank);
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
   * Adds a live prompt on `rank`; `words` holds its `length` hashes as little-endian u32 pairs (the
   * whole array unless said otherwise: a caller may pass a reused buffer).
   * @returns the segment where the prompt ends (the root for an empty prompt), which {@link remove}
   *   takes back. A later split keeps that id on the part that ends where the prompt ends.
   */
  insert(words: Uint32Array, rank: number, length = words.length >> 1): number {
    this.coverage.ensureRank(rank);
    let seg = ROOT;
    let i = 0;
    while (i < length) {
      const child = this.segments.find(seg, words[2 * i]!, words[2 * i + 1]!);
      if (child === NONE) return this.coverNew(seg, words, i, length, rank);
      this.warmNext(child, words, i, length);
      const matched = this.match(child, words, i, length);
      i += matched;
      if (matched < this.segments.data[child * STRIDE + LEN]!) {
        const head = splitSegment(this.parts, child, matched);
        this.coverage.cover(head, rank);
        return i === length ? head : this.coverNew(head, words, i, length, rank);
      }
      this.coverage.cover(child, rank);
      seg = child;
    }
    return seg;
  }

  /** Removes one live prompt on `rank` that {@link insert} ended at `leaf`. */
  remove(leaf: number, rank: number): void {
    let seg = leaf;
    while (seg !== ROOT) {
      const parent = this.segments.data[seg * STRIDE + PARENT]!;
      this.coverage.uncover(seg, rank);
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
  overlapDepths(words: Uint32Array, depths: Int32Array, length = words.length >> 1): void {
    const d = this.segments.data;
    let steps = 0;
    let seg = ROOT;
    let i = 0;
    while (i < length) {
      const child = this.segments.find(seg, words[2 * i]!, words[2 * i + 1]!);
      if (child === NONE) break;
      this.warmNext(child, words, i, length);
      const matched = this.match(child, words, i, length);
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
      const low =
        setDepths(d[at * STRIDE + MASK_LO]!, 0, depths, depth) +
        setDepths(d[at * STRIDE + MASK_HI]!, 32, depths, depth);
      if (low === ranks) continue;
      for (let e = this.ranks.first(at); e !== NONE; e = this.ranks.nextOf(e)) {
        const r = this.ranks.rankOf(e);
        if (r >= 64 && depths[r] === 0) depths[r] = depth;
      }
    }
  }

  /** Drops every segment and block (the tracker was deleted). */
  clear(): void {
    this.reset();
  }

  private reset(): void {
    const pool = new BlockPool(this.initialCapacity);
    const ranks = new RankCover();
    const segments = new SegmentTable(this.seed, (capacity) => ranks.ensureSegments(capacity));
    const groups = new ValueGroups(pool, new ValueIndex(this.seed, this.initialCapacity), segments, ranks);
    this.parts = { pool, segments, ranks, groups };
    this.pool = pool;
    this.segments = segments;
    this.ranks = ranks;
    this.groups = groups;
    this.coverage = new SegmentCoverage(segments, ranks, groups);
  }

  /**
   * Before matching `seg` from block `i`, starts the lookup that follows if the whole segment
   * matches, so that its cache misses overlap with the match's own.
   */
  private warmNext(seg: number, words: Uint32Array, i: number, length: number): void {
    const end = i + this.segments.data[seg * STRIDE + LEN]!;
    if (end < length) this.segments.warm(seg, words[2 * end]!, words[2 * end + 1]!);
  }

  /**
   * How many blocks of `seg`, from its first, equal the query's (of `length` blocks) from block `i`
   * (≥ 1: the first matched by key). Compares a chunk's positions in a plain loop and follows the
   * chain between chunks, rather than asking the pool for every next position.
   */
  private match(seg: number, words: Uint32Array, i: number, length: number): number {
    const limit = Math.min(this.segments.data[seg * STRIDE + LEN]!, length - i);
    const pool = this.pool;
    const w = pool.words;
    let p = this.segments.data[seg * STRIDE + START]!;
    let k = 0;
    while (k < limit) {
      const stop = Math.min(limit, k + CHUNK - (p & (CHUNK - 1)));
      for (let j = 2 * (i + k); k < stop; k++, p++, j += 2) {
        if (w[2 * p] !== words[j] || w[2 * p + 1] !== words[j + 1]) return k;
      }
      if (k < limit) p = pool.after(p - 1);
    }
    return k;
  }

  /** A new segment under `parent` holding the query's blocks from `from` to `end`, covered by `rank`. */
  private coverNew(parent: number, words: Uint32Array, from: number, end: number, rank: number): number {
    const length = end - from;
    const seg = this.segments.allocate();
    const start = this.pool.allocate(length, seg);
    const d = this.segments.data;
    const s = seg * STRIDE;
    d[s + PARENT] = parent;
    d[s + START] = start;
    d[s + LEN] = length;
    d[s + RANK] = NONE;
    d[s + COUNT] = 0;
    d[s + MASK_LO] = 0;
    d[s + MASK_HI] = 0;
    d[s + FIRST_LO] = words[2 * from]!;
    d[s + FIRST_HI] = words[2 * from + 1]!;
    this.segments.link(seg);
    const pool = this.pool;
    const w = pool.words;
    let p = start;
    let j = 2 * from;
    for (let k = 0; k < length; ) {
      for (const stop = Math.min(length, k + CHUNK - (p & (CHUNK - 1))); k < stop; k++, p++, j += 2) {
        w[2 * p] = words[j]!;
        w[2 * p + 1] = words[j + 1]!;
      }
      if (k < length) p = pool.after(p - 1);
    }
    this.groups.placeRun(start, length, seg);
    this.coverage.cover(seg, rank);
    return seg;
  }

  /** Frees a segment no rank covers (its children are gone already: they were covered no more than it). */
  private release(seg: number): void {
    const d = this.segments.data;
    const start = d[seg * STRIDE + START]!;
    const len = d[seg * STRIDE + LEN]!;
    this.segments.unlink(seg);
    this.groups.dropRun(start, len, seg);
    this.pool.release(start, len);
    this.segments.free(seg);
  }

  private growPath(): void {
    const next = new Int32Array(this.path.length * 2);
    next.set(this.path);
    this.path = next;
  }
}

/** Sets `depth` for each rank whose bit is set in `mask` (ranks `base`…`base + 31`) and has none; returns how many bits. */
function setDepths(mask: number, base: number, depths: Int32Array, depth: number): number {
  let bits = 0;
  for (let m = mask; m !== 0; m &= m - 1) {
    const r = base + 31 - Math.clz32(m & -m);
    if (depths[r] === 0) depths[r] = depth;
    bits++;
  }
  return bits;
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}
