/**
 * The prompt-membership trie of one tracker: every live prompt is a root path of block hashes, and
 * every node records which ranks have a live request through it and how many. It answers the two
 * questions the loads need without looking at individual requests:
 *
 * - `overlapDepths`: for every rank, the longest prefix of a query that is a prefix of one of the
 *   rank's live prompts (Dynamo's overlap depth), in time proportional to the query length plus the
 *   ranks met on its path;
 * - `blocks(rank)`: the number of distinct hash values over the rank's live prompts, kept exact
 *   incrementally. Real chained hashes give every node its own value, but a client may send one value
 *   at many nodes (at two depths, or under many parents), so a rank gains a block only when it covers
 *   the first node of that value, and loses it with the last.
 *
 * Storage is struct-of-arrays over typed arrays (no object and no bigint per hash or node), with node
 * ids recycled through a free list. One hash table, keyed by value, holds one *owner* node per
 * distinct value. A value found at several nodes gets a {@link ValueGroup}, which finds a member by
 * parent and counts per rank how many members the rank covers; every operation stays O(1) expected
 * per block however often a value repeats, so no input can make the object quadratic. The bucket
 * hash is seeded per trie so that colliding values cannot be crafted offline.
 */

const ROOT = 0;
const NONE = -1;
/** `rankOf` value of a node covered by two or more ranks; their counts live in `multi`. */
const MULTI = -2;

/** The nodes sharing one hash value (only for values at two or more nodes). */
interface ValueGroup {
  /** The node listed in the value table. */
  owner: number;
  /** Member node by parent node ((parent, value) identifies a node). */
  byParent: Map<number, number>;
  /** Per rank: how many members the rank covers. */
  covers: Map<number, number>;
}

export class PromptTrie {
  private capacity = 0;
  private hashLo = new Uint32Array(0);
  private hashHi = new Uint32Array(0);
  private parentOf = new Int32Array(0);
  /** Next owner in the same bucket chain, or NONE (free nodes: next free node). */
  private nextInBucket = new Int32Array(0);
  /** The single rank covering the node, MULTI, or NONE for the root and free nodes. */
  private rankOf = new Int32Array(0);
  /** Live requests through the node on `rankOf` (single-rank nodes only). */
  private countOf = new Int32Array(0);
  /** 0 when the node's value is at no other node, else its index in `groups` plus one. */
  private groupOf = new Int32Array(0);
  /** Per-rank counts of multi-rank nodes. */
  private readonly multi = new Map<number, Map<number, number>>();
  private readonly groups: (ValueGroup | undefined)[] = [];
  private readonly freeGroups: number[] = [];
  private buckets = new Int32Array(0);
  private bucketMask = 0;
  private readonly seed: number;
  private freeHead = NONE;
  private used = 1;
  private liveNodes = 0;
  /** Distinct-hash count per rank id. */
  private blockCounts = new Int32Array(16);

  constructor(initialCapacity = 1024, seed = randomSeed()) {
    this.seed = seed;
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
    this.groups.length = 0;
    this.freeGroups.length = 0;
    this.buckets.fill(NONE);
    this.groupOf.fill(0);
    this.blockCounts.fill(0);
    this.freeHead = NONE;
    this.used = 1;
    this.liveNodes = 0;
  }

  private cover(node: number, rank: number): void {
    const single = this.rankOf[node]!;
    if (single === rank) {
      this.countOf[node]!++;
      return;
    }
    if (single === NONE) {
      this.rankOf[node] = rank;
      this.countOf[node] = 1;
    } else if (single === MULTI) {
      const counts = this.multi.get(node)!;
      const count = counts.get(rank) ?? 0;
      counts.set(rank, count + 1);
      if (count > 0) return;
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
    // The rank covers this node for the first time: a new block unless it covers another node of the value.
    const g = this.groupOf[node]!;
    if (g !== 0) {
      const covers = this.groups[g - 1]!.covers;
      const before = covers.get(rank) ?? 0;
      covers.set(rank, before + 1);
      if (before > 0) return;
    }
    this.blockCounts[rank]!++;
  }

  private uncover(node: number, rank: number): void {
    const single = this.rankOf[node]!;
    if (single === MULTI) {
      const counts = this.multi.get(node)!;
      const left = counts.get(rank)! - 1;
      if (left > 0) {
        counts.set(rank, left);
        return;
      }
      counts.delete(rank);
      if (counts.size === 1) {
        const [onlyRank, onlyCount] = counts.entries().next().value!;
        this.multi.delete(node);
        this.rankOf[node] = onlyRank;
        this.countOf[node] = onlyCount;
      }
    } else if (--this.countOf[node]! > 0) {
      return;
    } else {
      this.rankOf[node] = NONE;
    }
    // The rank no longer covers this node: it loses the block unless it covers another node of the value.
    const g = this.groupOf[node]!;
    let lost = true;
    if (g !== 0) {
      const covers = this.groups[g - 1]!.covers;
      const left = covers.get(rank)! - 1;
      if (left > 0) {
        covers.set(rank, left);
        lost = false;
      } else covers.delete(rank);
    }
    if (lost) this.blockCounts[rank]!--;
    if (this.rankOf[node] === NONE) this.release(node);
  }

  /** The owner node of a value in the value table, or NONE. */
  private ownerOf(lo: number, hi: number): number {
    for (let m = this.buckets[this.bucketOf(lo, hi)]!; m !== NONE; m = this.nextInBucket[m]!) {
      if (this.hashLo[m] === lo && this.hashHi[m] === hi) return m;
    }
    return NONE;
  }

  private findChild(parent: number, lo: number, hi: number): number {
    const owner = this.ownerOf(lo, hi);
    if (owner === NONE) return NONE;
    const g = this.groupOf[owner]!;
    if (g === 0) return this.parentOf[owner] === parent ? owner : NONE;
    return this.groups[g - 1]!.byParent.get(parent) ?? NONE;
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
    this.groupOf[node] = 0;
    this.liveNodes++;
    const owner = this.ownerOf(lo, hi);
    if (owner === NONE) {
      this.link(node);
      return node;
    }
    let g = this.groupOf[owner]!;
    if (g === 0) g = this.groupFor(owner);
    this.groups[g - 1]!.byParent.set(parent, node);
    this.groupOf[node] = g;
    return node;
  }

  /** Turns a lone owner into the first member of a new group (its value just got a second node). */
  private groupFor(owner: number): number {
    const covers = new Map<number, number>();
    const single = this.rankOf[owner]!;
    if (single === MULTI) for (const r of this.multi.get(owner)!.keys()) covers.set(r, 1);
    else if (single !== NONE) covers.set(single, 1);
    const group: ValueGroup = { owner, byParent: new Map([[this.parentOf[owner]!, owner]]), covers };
    const index = this.freeGroups.pop();
    let g: number;
    if (index === undefined) g = this.groups.push(group);
    else {
      this.groups[index] = group;
      g = index + 1;
    }
    this.groupOf[owner] = g;
    return g;
  }

  private release(node: number): void {
    const g = this.groupOf[node]!;
    if (g === 0) {
      this.unlink(node);
    } else {
      const group = this.groups[g - 1]!;
      group.byParent.delete(this.parentOf[node]!);
      if (group.owner === node) {
        this.unlink(node);
        group.owner = group.byParent.values().next().value!;
        this.link(group.owner);
      }
      if (group.byParent.size === 1) {
        // One node of the value is left: its own coverage says everything the group counted.
        this.groupOf[group.owner] = 0;
        this.groups[g - 1] = undefined;
        this.freeGroups.push(g - 1);
      }
    }
    this.groupOf[node] = 0;
    this.nextInBucket[node] = this.freeHead;
    this.freeHead = node;
    this.liveNodes--;
  }

  private link(node: number): void {
    const b = this.bucketOf(this.hashLo[node]!, this.hashHi[node]!);
    this.nextInBucket[node] = this.buckets[b]!;
    this.buckets[b] = node;
  }

  private unlink(node: number): void {
    const b = this.bucketOf(this.hashLo[node]!, this.hashHi[node]!);
    let m = this.buckets[b]!;
    if (m === node) {
      this.buckets[b] = this.nextInBucket[node]!;
      return;
    }
    while (this.nextInBucket[m] !== node) m = this.nextInBucket[m]!;
    this.nextInBucket[m] = this.nextInBucket[node]!;
  }

  private ensureRank(rank: number): void {
    if (rank < this.blockCounts.length) return;
    const next = new Int32Array(Math.max(rank + 1, this.blockCounts.length * 2));
    next.set(this.blockCounts);
    this.blockCounts = next;
  }

  /**
   * Doubles the node arrays and rehashes the owners (one bucket per node slot). It only runs when
   * every slot is in use, so the free list is empty and nothing but owner chains needs rebuilding.
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
    this.groupOf = copy(this.groupOf, (n) => new Int32Array(n));
    this.nextInBucket = new Int32Array(capacity);
    this.buckets = new Int32Array(capacity).fill(NONE);
    this.bucketMask = capacity - 1;
    this.capacity = capacity;
    for (let node = 1; node < this.used; node++) {
      const g = this.groupOf[node]!;
      if (g === 0 || this.groups[g - 1]!.owner === node) this.link(node);
    }
  }

  /** Seeded mix of both halves, so structured test hashes spread and crafted collisions cannot be precomputed. */
  private bucketOf(lo: number, hi: number): number {
    const h = Math.imul(lo ^ Math.imul(hi ^ this.seed, 0x9e3779b1), 0x85ebca6b);
    return ((h ^ (h >>> 15)) >>> 0) & this.bucketMask;
  }
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}
