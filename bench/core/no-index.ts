/**
 * A cache index that records nothing and knows nothing: swapped into a `Tracker` (its `cache`), the
 * tracker runs without the index's work (the cache-index part's floor) and `/route` without its cache
 * credit (the routing-quality part), with no change to the code under measurement.
 */
import type {
  CacheIndex,
  CacheIndexStats,
  RankOverlap,
  RouterEvent,
} from "../../durable-objects/core/cache-index/cache-index";
import type { Tracker } from "../../durable-objects/core/tracker";

export class NoIndex implements CacheIndex {
  recordBooking(): number {
    return 0;
  }
  overlap(): RankOverlap[] {
    return [];
  }
  removeWorker(): number {
    return 0;
  }
  removeRank(): number {
    return 0;
  }
  expire(): number {
    return 0;
  }
  nextDeadline(): number | null {
    return null;
  }
  stats(): CacheIndexStats {
    return { entries: 0, blocks: 0, ranks: 0, maxEntries: 0, evicted: 0, expired: 0, memoryBytes: 0 };
  }
  dump(): RouterEvent[] {
    return [];
  }
}

/** Replaces `tracker`'s cache index (a readonly field the object never reassigns) with `index`. */
export function withIndex(tracker: Tracker, index: CacheIndex): Tracker {
  Object.assign(tracker, { cache: index });
  return tracker;
}
