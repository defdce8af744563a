/**
 * The engine-event cache index (SPEC §9): exactly what each (worker, dp_rank) reported cached, from
 * its KV events, as Dynamo's radix tree keeps it (reference selection §8, `radix_tree.rs`).
 *
 * - A block on a rank is named by the engine's hash, which is the rank's own; where it sits in the
 *   prompt tree comes from the chain of parents it was stored under. It matches a query by the
 *   public local hash of its tokens, walked from the root (`event-overlap.ts`), so ranks that stored
 *   the same tokens share nodes whatever their engine hashes.
 * - Stored: a run hangs under `parent`, an engine hash the rank holds in any tier, or under the
 *   root when null. An unknown parent stores nothing and counts the run `orphaned`, as Dynamo's
 *   `ParentBlockNotFound`. A run that names the parent, or a block of its own chain, again is cut
 *   there (the rest orphaned), as Dynamo rejects a self-referencing sequence.
 * - Re-storing a held block at its place adds the run's tier and makes its age the later of its age
 *   and `at`. Its ancestors' ages stay: engines store a block once, when it is first cached, and a
 *   parent cannot be evicted while it has children anyway (below).
 * - A held engine hash stored at another place (another parent's node, other tokens) moves there:
 *   its entry and the rank's entries below it go first, as a block is in one place. Dynamo repoints
 *   its lookup and leaves the old node to the worker: a stale entry that can never be removed.
 * - Removed: clears the event's tier from each named block; a block left in no tier goes, and the
 *   rank's blocks below it with it: they can never match again (a match walks from the root and
 *   the rank no longer holds the way there), so they must not keep memory. Dynamo keeps them in
 *   its lookup; they match again only if another worker kept the node and the rank re-stores it.
 *   Unknown hashes are ignored (Dynamo warns and goes on with the batch).
 * - Bounded by `maxEntries` (`MAX_CACHED_BLOCKS`): past it, the oldest leaves go first, by age and
 *   then by the order they became leaves (`leaf-queue.ts`), so a prefix never has a hole and a
 *   parent goes no sooner than its last child. A run is stored whole before the cap evicts, so a run
 *   older than everything held may go at once; `stats().evicted` counts what the cap took.
 * - `holdingsOf` reads a rank back as runs that rebuild it, tiers and ages included; a rebuild's
 *   ties between equal ages follow the order it applied them, not the original's.
 *
 * Through `CacheIndex` it ignores bookings (`recordBooking` changes nothing: events are the only
 * source), has no deadline (`expire` removes nothing), and reads only a query's local hashes. Pure:
 * no platform imports; times are the events' own (epoch ms).
 */
import { MAX_CACHED_BLOCKS } from "../../limits";
import type { KvRemovedOp, KvStoredOp } from "../../kv-event-types";
import { NONE } from "./arrays";
import type {
  CacheIndex,
  CacheIndexStats,
  PromptBlocks,
  RankOverlap,
  RouterEvent,
  StorageTier,
} from "./cache-index";
import { heldRuns, type KvHeldRun, rankDump, TIERS } from "./event-holdings";
import { OverlapWalk } from "./event-overlap";
import { EventTree } from "./event-tree";
import { randomSeed } from "./id-table";
import { MAX_PACKED_IDS } from "./packed-id-table";

export type { KvHeldRun };

export interface EventIndexOptions {
  /** Most (block, rank) entries held at once (≥ 1; default `MAX_CACHED_BLOCKS`). */
  maxEntries?: number;
  /** Seed of the hash tables and node paths; a random one by default. It never changes an answer. */
  seed?: number;
  /** Entries to allocate room for up front (the arrays grow by half, up to `maxEntries`). */
  initialEntries?: number;
}

export interface StoredResult {
  /** Blocks of the run now held (new, or re-stored at their place). */
  stored: number;
  /** Blocks not stored: an unknown parent, or a chain that named itself again. */
  orphaned: number;
  /** Entries the cap evicted after the run. */
  evicted: number;
}

export class EventIndex implements CacheIndex {
  readonly maxEntries: number;
  private readonly tree: EventTree;
  private readonly walk: OverlapWalk;
  private evicted = 0;

  constructor(options: EventIndexOptions = {}) {
    this.maxEntries = options.maxEntries ?? MAX_CACHED_BLOCKS;
    if (
      !Number.isSafeInteger(this.maxEntries) ||
      this.maxEntries < 1 ||
      this.maxEntries > MAX_PACKED_IDS / 2
    ) {
      throw new RangeError(
        `maxEntries must be an integer in 1..${MAX_PACKED_IDS / 2}, got ${this.maxEntries}`,
      );
    }
    const initial = Math.max(16, Math.min(options.initialEntries ?? 1024, this.maxEntries));
    this.tree = new EventTree(options.seed ?? randomSeed(), initial, this.maxEntries);
    this.walk = new OverlapWalk(this.tree);
  }

  /** A BlockStored run on (worker, rank): chain under `parent` (an engine hash this rank holds, or null = root). */
  applyStored(workerId: bigint, dpRank: number, op: KvStoredOp, at: number): StoredResult {
    const n = Math.min(op.engineHashes.length, op.localHashes.length);
    if (n === 0) return { stored: 0, orphaned: 0, evicted: 0 };
    const bit = tierBit(op.tier);
    const { tree } = this;
    let r = tree.ranks.idOf(workerId, dpRank);
    let attach = NONE;
    if (op.parent !== null) {
      const parent = BigInt.asUintN(64, op.parent);
      if (r !== NONE) attach = tree.lookups.findEntry(r, lowWord(parent), highWord(parent));
      if (attach === NONE) return { stored: 0, orphaned: n, evicted: 0 };
    } else if (r === NONE) r = tree.ranks.intern(workerId, dpRank);
    tree.hold(r);
    const engine = wordsOf(op.engineHashes);
    const local = wordsOf(op.localHashes);
    let pathLo = attach === NONE ? 0 : tree.pathWord(attach, 0);
    let pathHi = attach === NONE ? 0 : tree.pathWord(attach, 1);
    let stored = 0;
    for (; stored < n; stored++) {
      const lo = engine[2 * stored]!;
      const hi = engine[2 * stored + 1]!;
      const localLo = local[2 * stored]!;
      const localHi = local[2 * stored + 1]!;
      if (attach === NONE) tree.hasher.root(localLo, localHi);
      else tree.hasher.child(pathLo, pathHi, localLo, localHi);
      pathLo = tree.hasher.lo;
      pathHi = tree.hasher.hi;
      let e = tree.lookups.findEntry(r, lo, hi);
      if (e !== NONE && !tree.isAt(e, pathLo, pathHi)) {
        if (tree.entries.isAncestorOrSelf(e, attach)) break;
        tree.removeSubtree(e);
        e = NONE;
      }
      if (e === NONE) e = tree.create(r, attach, lo, hi, pathLo, pathHi, localLo, localHi, bit, at);
      else tree.refresh(e, bit, at);
      attach = e;
    }
    const evicted = this.evictOverCap();
    tree.unhold(r);
    return { stored, orphaned: n - stored, evicted };
  }

  /** A BlockRemoved on (worker, rank): returns the entries removed (a block left in another tier stays). */
  applyRemoved(workerId: bigint, dpRank: number, op: KvRemovedOp): number {
    const { tree } = this;
    const r = tree.ranks.idOf(workerId, dpRank);
    if (r === NONE) return 0;
    const bit = tierBit(op.tier);
    const engine = wordsOf(op.engineHashes);
    let removed = 0;
    tree.hold(r);
    for (let j = 0; j < op.engineHashes.length; j++) {
      const e = tree.lookups.findEntry(r, engine[2 * j]!, engine[2 * j + 1]!);
      if (e === NONE || (tree.entries.tiers(e) & bit) === 0) continue;
      if (tree.clearTier(e, bit) === 0) removed += tree.removeSubtree(e);
    }
    tree.unhold(r);
    return removed;
  }

  /** AllBlocksCleared, or a new epoch of the rank's publisher: drops what the rank held. */
  clearRank(workerId: bigint, dpRank: number): number {
    return this.removeRank(workerId, dpRank);
  }

  rankEntries(workerId: bigint, dpRank: number): number {
    const r = this.tree.ranks.idOf(workerId, dpRank);
    return r === NONE ? 0 : this.tree.ranks.count[r]!;
  }

  /** Ranks holding entries, sorted by worker id then dp_rank. */
  ranksHeld(): Array<{ workerId: bigint; dpRank: number }> {
    const { ranks } = this.tree;
    return ranks.sorted().map((r) => ({ workerId: ranks.workerOf[r]!, dpRank: ranks.dpRankOf[r]! }));
  }

  /**
   * The rank's holdings as runs, parents before children, such that applying them in order
   * (`applyStored` with each run's `at`) to an index without this rank rebuilds the same holdings,
   * tiers and ages. Read lazily: the index must not change until the last run is read.
   */
  holdingsOf(workerId: bigint, dpRank: number): Iterable<KvHeldRun> {
    const r = this.tree.ranks.idOf(workerId, dpRank);
    return r === NONE ? [] : heldRuns(this.tree, r);
  }

  recordBooking(_workerId: bigint, _dpRank: number, _prompt: PromptBlocks, _at: number): number {
    return 0;
  }

  /**
   * Every rank holding the query's first block, walked by the prompt's public sequence hashes (the
   * nodes' names, `path-hash.ts`); `now` does not matter (no TTL).
   */
  overlap(prompt: PromptBlocks, _now: number): RankOverlap[] {
    const n = Math.min(prompt.localHashes.length, prompt.sequenceHashes.length);
    return this.walk.run(prompt.sequenceHashes.subarray(0, n));
  }

  removeWorker(workerId: bigint): number {
    const { ranks } = this.tree;
    let removed = 0;
    for (const r of ranks.ranksOf(workerId)) removed += this.drainRank(r);
    return removed;
  }

  removeRank(workerId: bigint, dpRank: number): number {
    const r = this.tree.ranks.idOf(workerId, dpRank);
    return r === NONE ? 0 : this.drainRank(r);
  }

  expire(_now: number): number {
    return 0;
  }

  nextDeadline(): number | null {
    return null;
  }

  stats(): CacheIndexStats {
    const { tree } = this;
    return {
      entries: tree.entries.size,
      blocks: tree.lookups.nodes,
      ranks: tree.ranks.size,
      maxEntries: this.maxEntries,
      evicted: this.evicted,
      expired: 0,
      memoryBytes: tree.bytes,
    };
  }

  /** Per rank (in `overlap`'s order), per tier, the rank's chains as Dynamo RouterEvents. */
  dump(): RouterEvent[] {
    const events: RouterEvent[] = [];
    for (const r of this.tree.ranks.sorted()) {
      for (const e of rankDump(this.tree, r)) {
        events.push({ ...e, event: { ...e.event, event_id: events.length } });
      }
    }
    return events;
  }

  private evictOverCap(): number {
    const { tree } = this;
    let n = 0;
    while (tree.entries.size > this.maxEntries) {
      tree.removeLeaf(tree.queue.oldest());
      n++;
    }
    this.evicted += n;
    return n;
  }

  private drainRank(r: number): number {
    const { tree } = this;
    let removed = 0;
    tree.hold(r);
    while (tree.ranks.head[r] !== NONE) removed += tree.removeSubtree(tree.ranks.head[r]!);
    tree.unhold(r);
    return removed;
  }
}

function tierBit(tier: StorageTier): number {
  const k = TIERS.indexOf(tier);
  if (k < 0) throw new RangeError(`unknown storage tier ${String(tier)}`);
  return 1 << k;
}

/** The 32-bit words of u64 hashes, low word first (Workers and Node run little-endian). */
function wordsOf(hashes: BigUint64Array): Int32Array {
  return new Int32Array(hashes.buffer, hashes.byteOffset, hashes.length * 2);
}

function lowWord(x: bigint): number {
  return Number(x & 0xffffffffn) | 0;
}

function highWord(x: bigint): number {
  return Number(x >> 32n) | 0;
}
