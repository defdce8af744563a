/**
 * The prompt-membership trie of one tracker: every live prompt is a root path of block hashes, and
 * every node records which ranks have a live request through it and how many. It answers the two
 * questions the loads need without looking at individual requests:
 *
 * - `overlapDepths`: for every rank, the longest prefix of a query that is a prefix of one of the
 *   rank's live prompts (Dynamo's overlap depth), in time proportional to the query length plus the
 *   ranks met on its path;
 * - `blocks(rank)`: the number of distinct hash values over the rank's live prompts, kept exact
 *   incrementally. With real chained hashes every node has its own hash, but a client may send the
 *   same hash at two depths, so a rank gains a block only when no other node with that hash value is
 *   already covered by the rank, and loses it only when the last such node is uncovered.
 *
 * Storage is struct-of-arrays over typed arrays (no object and no bigint per hash or node), with node
 * ids recycled through a free list. All nodes with the same hash value share one bucket chain, which
 * serves both the child lookup (parent, hash) and the same-hash scan above.
 */

const ROOT = 0;
const NONE = -1;
/** `rankOf` value of a node covered by two or more ranks; their counts live in `multi`. */
const MULTI = -2;

export class PromptTrie {
  private capacity = 0;
  private hashLo = new Uint32Array(0);
  private hashHi = new Uint32Array(0);
  private parentOf = new Int32Array(0);
  /** Next node in the same bucket chain, or NONE. */
  private nextInBucket = new Int32Array(0);
  /** The single rank covering the node, MULTI, or NONE for the root and free nodes. */
  private rankOf = new Int32Array(0);
  /** Live requests through the node on `rankOf` (single-rank nodes only). */
  private countOf = new Int32Array(0);
  /** Per-rank counts of multi-rank nodes. */
  private multi = new Map<number, Map<number, number>>();
  private buckets = new Int32Array(0);
  private bucketMask = 0;
  private freeHead = NONE;
  private used = 1;
  private liveNodes = 0;
  /** Distinct-hash count per rank id. */
  private blockCounts = new Int32Array(16);

  constructor(initialCapacity = 1024) {
    this.grow(Math.max(16, initialCapacity));
    this.parentOf[ROOT] = NONE;
    this.rankOf[ROOT] = NONE;
  }

  /** Distinct hashes over the live prompts on `rank`. */
  blocks(rank: number): number {
    return rank < this.blockCounts.length ? this.blockCounts[rank]! : 0;
  }

  /** Nodes in use, root excluded (for tests and memory figures). */
  get size(): number {
    return this.liveNodes;
  }

  /**
   * Adds a live prompt on `rank`; `words` holds its hashes as little-endian u32 pairs.
   * @returns the node of the prompt's last block (the root for an empty prompt), which
   *   {@link remove} takes back.
   */
  insert(words: Uint32Array, rank: number): number {
    this.ensureRank(rank);
    let node = ROOT;
    for (let i = 0; i < words.length; i += 2) {
      const lo = words[i]!;
      const hi = words[i + 1]!;
      let child = this.findChild(node, lo, hi);
      if (child === NONE) child = this.createChild(node, lo, hi);
      this.cover(child, rank);
      node = child;
    }
    return node;
  }

  /** Removes one live prompt on `rank` that {@link insert} ended at `leaf`. */
  remove(leaf: number, rank: number): void {
    let node = leaf;
    while (node !== ROOT) {
      const parent = this.parentOf[node]!;
      this.uncover(node, rank);
      node = parent;
    }
  }

  /** Blocks in the prompt ending at `leaf`. */
  promptLength(leaf: number): number {
    let n = 0;
    for (let node = leaf; node !== ROOT; node = this.parentOf[node]!) n++;
    return n;
  }

  /** The hashes of the prompt ending at `leaf`, root first. */
  prompt(leaf: number): BigUint64Array {
    const out = new BigUint64Array(this.promptLength(leaf));
    const words = new Uint32Array(out.buffer);
    let i = out.length;
    for (let node = leaf; node !== ROOT; node = this.parentOf[node]!) {
      i--;
      words[2 * i] = this.hashLo[node]!;
      words[2 * i + 1] = this.hashHi[node]!;
    }
    return out;
  }

  /**
   * Sets `depths[rank]` to the overlap depth of the query on every rank with any overlap; ranks
   * with none are left untouched (the caller zeroes the array first).
   */
  overlapDepths(words: Uint32Array, depths: Int32Array): void {
    let node = ROOT;
    for (let i = 0; i < words.length; i += 2) {
      const child = this.findChild(node, words[i]!, words[i + 1]!);
      if (child === NONE) return;
      const depth = (i >> 1) + 1;
      const rank = this.rankOf[child]!;
      if (rank === MULTI) {
        for (const r of this.multi.get(child)!.keys()) depths[r] = depth;
      } else {
        depths[rank] = depth;
      }
      node = child;
    }
  }

  /** Drops every node (the tracker was deleted). */
  clear(): void {
    this.multi.clear();
    this.buckets.fill(NONE);
    this.blockCounts.fill(0);
    this.freeHead = NONE;
    this.used = 1;
    this.liveNodes = 0;
  }

  private coverage(node: number, rank: number): number {
    const single = this.rankOf[node]!;
    if (single === rank) return this.countOf[node]!;
    if (single !== MULTI) return 0;
    return this.multi.get(node)!.get(rank) ?? 0;
  }

  private cover(node: number, rank: number): void {
    const single = this.rankOf[node]!;
    if (single === rank) {
      this.countOf[node]!++;
      return;
    }
    // A multi-rank node may already be covered by `rank`; only its first cover can add a block.
    const first = single !== MULTI || !this.multi.get(node)!.has(rank);
    if (first && !this.sameHashCoveredElsewhere(node, rank)) this.blockCounts[rank]!++;
    if (single === NONE) {
      this.rankOf[node] = rank;
      this.countOf[node] = 1;
    } else if (single === MULTI) {
      const counts = this.multi.get(node)!;
      counts.set(rank, (counts.get(rank) ?? 0) + 1);
    } else {
      this.multi.set(
        node,
        new Map([
          [single, this.countOf[node]!],
          [rank, 1],
        ]),
      );
      this.rankOf[node] = MULTI;
      this.countOf[node] = 0;
    }
  }

  private uncover(node: number, rank: number): void {
    const single = this.rankOf[node]!;
    let left: number;
    if (single === MULTI) {
      const counts = this.multi.get(node)!;
      left = counts.get(rank)! - 1;
      if (left > 0) counts.set(rank, left);
      else counts.delete(rank);
      if (counts.size === 1) {
        const [onlyRank, onlyCount] = counts.entries().next().value!;
        this.multi.delete(node);
        this.rankOf[node] = onlyRank;
        this.countOf[node] = onlyCount;
      }
    } else {
      left = --this.countOf[node]!;
      if (left === 0) this.rankOf[node] = NONE;
    }
    if (left === 0 && !this.sameHashCoveredElsewhere(node, rank)) this.blockCounts[rank]!--;
    if (this.rankOf[node] === NONE) this.release(node);
  }

  /** Whether a node other than `node` with the same hash value is covered by `rank`. */
  private sameHashCoveredElsewhere(node: number, rank: number): boolean {
    const lo = this.hashLo[node]!;
    const hi = this.hashHi[node]!;
    for (let m = this.buckets[bucketOf(lo, hi) & this.bucketMask]!; m !== NONE; m = this.nextInBucket[m]!) {
      if (m !== node && this.hashLo[m] === lo && this.hashHi[m] === hi && this.coverage(m, rank) > 0) {
        return true;
      }
    }
    return false;
  }

  private findChild(parent: number, lo: number, hi: number): number {
    for (let m = this.buckets[bucketOf(lo, hi) & this.bucketMask]!; m !== NONE; m = this.nextInBucket[m]!) {
      if (this.hashLo[m] === lo && this.hashHi[m] === hi && this.parentOf[m] === parent) return m;
    }
    return NONE;
  }

  private createChild(parent: number, lo: number, hi: number): number {
    let node = this.freeHead;
    if (node !== NONE) {
      this.freeHead = this.nextInBucket[node]!;
    } else {
      if (this.used === this.capacity) this.grow(this.capacity * 2);
      node = this.used++;
    }
    this.hashLo[node] = lo;
    this.hashHi[node] = hi;
    this.parentOf[node] = parent;
    this.rankOf[node] = NONE;
    this.countOf[node] = 0;
    const b = bucketOf(lo, hi) & this.bucketMask;
    this.nextInBucket[node] = this.buckets[b]!;
    this.buckets[b] = node;
    this.liveNodes++;
    return node;
  }

  private release(node: number): void {
    const b = bucketOf(this.hashLo[node]!, this.hashHi[node]!) & this.bucketMask;
    let m = this.buckets[b]!;
    if (m === node) {
      this.buckets[b] = this.nextInBucket[node]!;
    } else {
      while (this.nextInBucket[m] !== node) m = this.nextInBucket[m]!;
      this.nextInBucket[m] = this.nextInBucket[node]!;
    }
    this.nextInBucket[node] = this.freeHead;
    this.freeHead = node;
    this.liveNodes--;
  }

  private ensureRank(rank: number): void {
    if (rank < this.blockCounts.length) return;
    const next = new Int32Array(Math.max(rank + 1, this.blockCounts.length * 2));
    next.set(this.blockCounts);
    this.blockCounts = next;
  }

  /**
   * Doubles the node arrays and rehashes the bucket chains (one bucket per node slot). It only runs
   * when every slot is in use, so the free list is empty and nothing but live chains needs rebuilding.
   */
  private grow(capacity: number): void {
    const copy = <T extends Uint32Array | Int32Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    this.hashLo = copy(this.hashLo, (n) => new Uint32Array(n));
    this.hashHi = copy(this.hashHi, (n) => new Uint32Array(n));
    this.parentOf = copy(this.parentOf, (n) => new Int32Array(n));
    this.rankOf = copy(this.rankOf, (n) => new Int32Array(n));
    this.countOf = copy(this.countOf, (n) => new Int32Array(n));
    this.nextInBucket = new Int32Array(capacity);
    this.buckets = new Int32Array(capacity).fill(NONE);
    this.bucketMask = capacity - 1;
    this.capacity = capacity;
    for (let node = 1; node < this.used; node++) {
      if (this.rankOf[node] === NONE) continue;
      const b = bucketOf(this.hashLo[node]!, this.hashHi[node]!) & this.bucketMask;
      this.nextInBucket[node] = this.buckets[b]!;
      this.buckets[b] = node;
    }
  }
}

/** Mixes both halves of a hash so that structured test hashes (small integers) spread too. */
function bucketOf(lo: number, hi: number): number {
  const h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  return (h ^ (h >>> 15)) >>> 0;
}
