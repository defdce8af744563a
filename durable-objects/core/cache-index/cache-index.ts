/**
 * The cache index of one tracker: which prompt blocks each (worker, dp_rank) holds in its KV cache,
 * as a router sees it (SPEC §7 "Overlap and cost", §9). Two implementations answer the same calls:
 *
 * - the approximate index (`approximate-index.ts`, Dynamo's `use_kv_events=false`, reference
 *   selection §5): each booking's prompt is assumed cached on its rank for `DYN_ROUTER_TTL_SECS`
 *   from the booking's origin time; device tier only;
 * - the engine-event index (SPEC §9): exact per-rank blocks from engine KV events, every tier, no TTL,
 *   bounded by `MAX_CACHED_BLOCKS`. Its event intake is its own; through this interface it ignores
 *   bookings (`recordBooking` changes nothing), has no deadline, and fills the lower tiers.
 *
 * This file is the lower one of the wing: types only, no code. Times are epoch ms, as everywhere in
 * the core; hashes and worker ids are u64 `bigint`s; a dp_rank is a u32 `number`.
 */

/** Where a cached block lives, in Dynamo's `StorageTier` spelling (serde snake_case). */
export type StorageTier = "device" | "host_pinned" | "disk" | "external";

/**
 * A prompt as the index sees it: block `i` is identified by its public local block hash (reference
 * selection §3.1, `tokens_hash`) and its public-chain sequence hash (§3.2, `block_hash`), which
 * names the whole prefix 0..i. The index keys a block on (sequence hash, local hash, parent sequence
 * hash, position), so a trusted client sending inconsistent hashes cannot make two different prefixes
 * match each other. Only the first `min(localHashes.length, sequenceHashes.length)` blocks count
 * (the routes reject unequal lengths before this).
 */
export interface PromptBlocks {
  localHashes: BigUint64Array;
  sequenceHashes: BigUint64Array;
}

/**
 * What one (worker, rank) has of a queried prompt, in blocks (reference selection §4.1). The tiers
 * are *exclusive continuations* of one leading run, as Dynamo's `query_lower_tiers` counts them:
 * `deviceBlocks` is the number of leading consecutive blocks on the device; `hostPinnedBlocks`
 * continues that run from block `deviceBlocks` with blocks held in host-pinned memory; `diskBlocks`
 * continues from `deviceBlocks + hostPinnedBlocks`, and `externalBlocks` from there. A block is
 * counted once, in the first tier that continues the run. Dynamo's `/overlap_scores` row derives from
 * these: `host_pinned_extension_blocks` = `hostPinnedBlocks`, `disk_extension_blocks` = `diskBlocks +
 * externalBlocks`, and its cumulative `host_pinned_blocks` / `disk_blocks` by adding the tiers above.
 * The approximate index reports device only (the lower tiers are always 0, as in Dynamo).
 */
export interface RankOverlap {
  workerId: bigint;
  dpRank: number;
  deviceBlocks: number;
  hostPinnedBlocks: number;
  diskBlocks: number;
  externalBlocks: number;
}

/** Size and health figures; counters run from the index's construction. */
export interface CacheIndexStats {
  /** Indexed (block, rank) entries: one per block a rank holds, whatever the tier. */
  entries: number;
  /** Distinct blocks held by at least one rank. */
  blocks: number;
  /** (worker, rank) pairs holding at least one entry. */
  ranks: number;
  /**
   * The cap on `entries`, which no call leaves exceeded. When `entries` is at it and `evicted` grows,
   * overlap answers are lower than the unbounded index's: report it, do not hide it.
   */
  maxEntries: number;
  /** Entries dropped to stay within `maxEntries` (not those that expired or were removed). */
  evicted: number;
  /** Entries removed because their deadline passed. */
  expired: number;
  /** Estimated bytes of the index's own structures (allocated capacity, not only what is in use). */
  memoryBytes: number;
}

/** One block of a Stored event: `block_hash` is the sequence hash, `tokens_hash` the local hash. */
export interface StoredBlock {
  block_hash: bigint;
  tokens_hash: bigint;
}

/**
 * Dynamo's `RouterEvent` (reference selection §8) holding a `Stored` event, in its JSON field names
 * and order: `/dump` returns these, and a Dynamo peer recovers its index from them unchanged. u64
 * values are `bigint`s, written as exact JSON integers by the route layer.
 */
export interface RouterEvent {
  worker_id: bigint;
  storage_tier: StorageTier;
  event: {
    /** Position of the event in its dump, from 0. */
    event_id: number;
    data: {
      stored: {
        /** Sequence hash of the block before the first one; null when the chain starts at the root. */
        parent_hash: bigint | null;
        /** Position of the first block; present only when the chain does not start at the root. */
        start_position?: number;
        blocks: StoredBlock[];
      };
    };
    dp_rank: number;
  };
}

export interface CacheIndex {
  /**
   * Records that `prompt` is cached on (workerId, dpRank) as of `at`, the booking's origin time
   * (epoch ms), so that every replica applying the booking records the same entries. The approximate
   * index makes each block's deadline the latest `at + TTL` any recording gave it: re-recording
   * renews, an earlier `at` never shortens. A recording whose deadline is not after the latest
   * `expire(now)` changes nothing. Returns how many entries the cap evicted during the call.
   */
  recordBooking(workerId: bigint, dpRank: number, prompt: PromptBlocks, at: number): number;

  /**
   * Every (worker, rank) holding at least the first block of `prompt` at `now` (epoch ms), sorted by
   * worker id then dp_rank, ascending. Entries whose deadline is at or before `now` are not counted,
   * whether or not `expire` has run. Costs O(Σ over matched positions of the ranks holding that
   * block), never a walk over all entries.
   */
  overlap(prompt: PromptBlocks, now: number): RankOverlap[];

  /** Drops every entry of every rank of `workerId` (unregister, catalog removal); returns how many. */
  removeWorker(workerId: bigint): number;

  /** Drops every entry of one rank (a dp range that shrank); returns how many. */
  removeRank(workerId: bigint, dpRank: number): number;

  /** Removes every entry whose deadline is at or before `now` (epoch ms); returns how many. */
  expire(now: number): number;

  /** The earliest deadline of any entry (epoch ms), or null when none expires: for the tracker's alarm. */
  nextDeadline(): number | null;

  stats(): CacheIndexStats;

  /**
   * The index as Stored events, ranks in the order of `overlap`'s rows: per rank, each chain of
   * blocks it holds, a branch starting a new event whose `parent_hash` is the block it hangs from.
   */
  dump(): RouterEvent[];
}
