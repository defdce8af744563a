/**
 * Dynamo's approximate indexer (`use_kv_events=false`, reference selection §5) as a `CacheIndex`:
 * a booking's prompt counts as cached on its rank until `ttlMs` after the booking's origin time.
 *
 * - An entry is a (block, rank) pair; a block is keyed by its (sequence, local, parent) hashes and
 *   position, so the sequence hash that names a prefix must also agree on the local hash and the
 *   chain. Recording the same entry again renews it: its deadline becomes the latest `at + ttlMs`
 *   recorded, so replicas that apply the same bookings in any order hold the same deadlines (Dynamo
 *   resets to now + TTL; with origin times that arrive in order the two agree). Frees, prefill
 *   completion and request expiry do not touch the index; only the TTL and worker or rank removal do.
 * - Overlap walks the prompt's blocks and, at each, the ranks holding it: a rank's device count is
 *   its run of leading consecutive blocks, ranks of one worker independent. Nothing scans the bookings.
 * - Bounded: past `maxEntries` the entries of the earliest deadline go first, the deepest position
 *   first within one deadline (`eviction-order.ts`), counted in `stats().evicted`. Dynamo's newest
 *   approximate indexer has no cap at all (reference §5 "Capacity"); a Durable Object must have one.
 *   The kept entries are the `maxEntries` highest in (deadline, eviction order), which makes them the
 *   same at every replica for the same bookings, whatever their order, until a worker or rank is
 *   removed (removal frees room that entries evicted earlier do not come back to fill).
 */

import { DEFAULT_ROUTER_TTL_SECS, MAX_CACHE_INDEX_ENTRIES } from "../../limits";
import { NONE } from "./arrays";
import { BlockTable } from "./block-table";
import type { CacheIndex, CacheIndexStats, PromptBlocks, RankOverlap, RouterEvent } from "./cache-index";
import { DeadlineGroups } from "./deadline-groups";
import { EntryStore } from "./entry-store";
import { evictionOrder } from "./eviction-order";
import { randomSeed } from "./id-table";
import { dumpEvents } from "./index-dump";
import { compareRanks, RankTable } from "./rank-table";

export interface ApproximateIndexOptions {
  /** How long a recorded block stays after its latest recording's origin time, ms (> 0; default 120 s). */
  ttlMs?: number;
  /** Most (block, rank) entries held at once (≥ 1; default `MAX_CACHE_INDEX_ENTRIES`). */
  maxEntries?: number;
  /** Seed of the hash tables; a random one by default. It never changes an answer. */
  seed?: number;
  /** Entries to allocate room for up front (the arrays grow by half as needed). */
  initialEntries?: number;
  /**
   * Whether a block's local hash is part of its key (the default). Off, blocks are keyed by their
   * sequence hashes alone and carry a local hash for `dump` (`block-table.ts`): how a tracker lets
   * bookings known only by sequence hashes meet bookings made from tokens.
   */
  keyOnLocal?: boolean;
}

export class ApproximateIndex implements CacheIndex {
  readonly ttlMs: number;
  readonly maxEntries: number;
  private readonly blocks: BlockTable;
  private readonly ranks = new RankTable();
  private readonly groups = new DeadlineGroups();
  private readonly entries: EntryStore;
  /** The latest `now` expiry ran at: a recording due by then would be expired on arrival. */
  private horizon = Number.NEGATIVE_INFINITY;
  private evicted = 0;
  private expired = 0;
  /** Overlap scratch: each rank's run so far (0 outside a query), and the ranks that started one. */
  private run = new Int32Array(64);
  private started = new Int32Array(64);

  constructor(options: ApproximateIndexOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_ROUTER_TTL_SECS * 1000;
    this.maxEntries = options.maxEntries ?? MAX_CACHE_INDEX_ENTRIES;
    if (!(this.ttlMs > 0)) throw new RangeError(`ttlMs must be positive, got ${this.ttlMs}`);
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) {
      throw new RangeError(`maxEntries must be a positive integer, got ${this.maxEntries}`);
    }
    const seed = options.seed ?? randomSeed();
    const initial = Math.max(16, Math.min(options.initialEntries ?? 1024, this.maxEntries));
    this.blocks = new BlockTable(seed, initial, options.keyOnLocal ?? true);
    this.entries = new EntryStore(this.blocks, this.ranks, this.groups, seed ^ 0x5bd1e995, initial);
  }

  recordBooking(workerId: bigint, dpRank: number, prompt: PromptBlocks, at: number): number {
    const n = lengthOf(prompt);
    const deadline = at + this.ttlMs;
    if (n === 0 || !(deadline > this.horizon)) return 0;
    const seq = wordsOf(prompt.sequenceHashes);
    const local = wordsOf(prompt.localHashes);
    const { blocks, entries, groups } = this;
    // The blocks recorded before, each just after the previous one (see `BlockTable`), are found
    // from their hints alone: only the rest need a key hash and their table slots read ahead.
    const first = blocks.find(seq, local, 0);
    let known = first === NONE ? 0 : 1;
    while (known > 0 && known < n && blocks.hints(first + known, seq, local, known)) known++;
    const hashes = blocks.prepare(seq, local, n, known);
    const r = this.ranks.intern(workerId, dpRank);
    const g = groups.intern(deadline);
    // Each block and entry is looked for first just after the previous one.
    let b = NONE;
    let e = NONE;
    for (let i = 0; i < n; i++) {
      const hint = i === 0 ? first : b + 1;
      b = blocks.intern(seq, local, i, hint, hashes[i]!);
      // A block created just now has no entries to find.
      const found = blocks.created ? NONE : entries.find(b, r, e === NONE ? NONE : e + 1);
      if (found === NONE) e = entries.add(b, r, g);
      else {
        e = found;
        if (groups.deadline[entries.group(e)]! < deadline) entries.moveTo(e, g);
      }
    }
    // Every block was already held until later: the new group stayed empty.
    if (groups.count[g] === 0) groups.release(g);
    const evicted = this.evictOverCap();
    blocks.settle();
    return evicted;
  }

  overlap(prompt: PromptBlocks, now: number): RankOverlap[] {
    const n = lengthOf(prompt);
    if (n === 0) return [];
    const seq = wordsOf(prompt.sequenceHashes);
    const local = wordsOf(prompt.localHashes);
    const { blocks, entries, groups, ranks } = this;
    if (this.run.length < ranks.capacity) {
      this.run = new Int32Array(ranks.capacity);
      this.started = new Int32Array(ranks.capacity);
    }
    const { run, started } = this;
    let count = 0;
    let b = NONE;
    for (let i = 0; i < n; i++) {
      b = blocks.find(seq, local, i, b === NONE ? NONE : b + 1);
      if (b === NONE) break;
      let advanced = false;
      for (let e = blocks.head(b); e !== NONE; e = entries.nextOfBlock(e)) {
        if (!(groups.deadline[entries.group(e)]! > now)) continue;
        const r = entries.rank(e);
        // A rank continues only if it held every block before this one.
        if (run[r] !== i) continue;
        run[r] = i + 1;
        advanced = true;
        if (i === 0) started[count++] = r;
      }
      if (!advanced) break;
    }
    const ids = Array.from(started.subarray(0, count)).sort((a, b) => compareRanks(ranks, a, b));
    return ids.map((r) => {
      const deviceBlocks = run[r]!;
      run[r] = 0;
      return {
        workerId: ranks.workerOf[r]!,
        dpRank: ranks.dpRankOf[r]!,
        deviceBlocks,
        hostPinnedBlocks: 0,
        diskBlocks: 0,
        externalBlocks: 0,
      };
    });
  }

  removeWorker(workerId: bigint): number {
    let removed = 0;
    for (const r of this.ranks.ranksOf(workerId)) removed += this.drainRank(r);
    return removed;
  }

  removeRank(workerId: bigint, dpRank: number): number {
    const r = this.ranks.idOf(workerId, dpRank);
    return r === NONE ? 0 : this.drainRank(r);
  }

  expire(now: number): number {
    if (now > this.horizon) this.horizon = now;
    const { groups } = this;
    let removed = 0;
    for (let g = groups.earliest(); g !== NONE && groups.deadline[g]! <= now; g = groups.earliest()) {
      removed += this.entries.drain(g);
    }
    this.blocks.settle();
    this.expired += removed;
    return removed;
  }

  nextDeadline(): number | null {
    const g = this.groups.earliest();
    return g === NONE ? null : this.groups.deadline[g]!;
  }

  stats(): CacheIndexStats {
    return {
      entries: this.entries.size,
      blocks: this.blocks.size,
      ranks: this.ranks.size,
      maxEntries: this.maxEntries,
      evicted: this.evicted,
      expired: this.expired,
      memoryBytes: this.entries.bytes + this.blocks.bytes + this.ranks.bytes + this.groups.bytes,
    };
  }

  dump(): RouterEvent[] {
    const { blocks, entries, ranks } = this;
    const source = {
      *ranks() {
        for (const r of ranks.sorted()) {
          const held: number[] = [];
          for (let e = ranks.head[r]!; e !== NONE; e = entries.nextOfRank(e)) held.push(entries.block(e));
          yield { workerId: ranks.workerOf[r]!, dpRank: ranks.dpRankOf[r]!, blocks: held };
        }
      },
      position: (b: number) => blocks.position(b),
      sequenceHash: (b: number) => blocks.sequenceHash(b),
      localHash: (b: number) => blocks.localHash(b),
      parentHash: (b: number) => blocks.parentHash(b),
    };
    return dumpEvents(source, "device");
  }

  /** Drops entries, earliest deadline first, until at most `maxEntries` remain; returns how many. */
  private evictOverCap(): number {
    const { entries, groups } = this;
    let excess = entries.size - this.maxEntries;
    if (excess <= 0) return 0;
    const dropped = excess;
    while (excess > 0) {
      const g = groups.earliest();
      if (groups.count[g]! <= excess) {
        excess -= this.entries.drain(g);
        continue;
      }
      if (groups.unordered[g] === 1) {
        entries.relinkGroup(g, evictionOrder(entries, this.blocks, this.ranks, groups.head[g]!));
      }
      // The list is in eviction order: its first `excess` entries go.
      for (let k = 0; k < excess; k++) entries.remove(groups.head[g]!);
      excess = 0;
    }
    this.evicted += dropped;
    return dropped;
  }

  /** Removes every entry of rank `r` (which releases it); returns how many. */
  private drainRank(r: number): number {
    const { entries, ranks } = this;
    const n = ranks.count[r]!;
    while (ranks.head[r] !== NONE) entries.remove(ranks.head[r]!);
    this.blocks.settle();
    return n;
  }
}

function lengthOf(prompt: PromptBlocks): number {
  return Math.min(prompt.localHashes.length, prompt.sequenceHashes.length);
}

/** The 32-bit words of u64 hashes, low word first (every platform Workers and Node run on is little-endian). */
function wordsOf(hashes: BigUint64Array): Int32Array {
  return new Int32Array(hashes.buffer, hashes.byteOffset, hashes.length * 2);
}
