/**
 * Pending selections: what `/select` with a `selection_id` chose, kept for a `/reservations` replay
 * (reference selection §1.5, §1.6). Per tracker object and replica, in memory, as Dynamo keeps them
 * per replica: a replay must reach the replica that selected, and a restart forgets them.
 *
 * Bounded as Dynamo's selection cache is: an entry lives `ttlMs` from its first insertion (a
 * re-insert of the id replaces what it holds but keeps that anchor, and its place), and past
 * `maxEntries` or `maxBytes` the oldest insertions go first. A `Map` keeps insertion order, and with
 * one TTL the oldest insertion is also the first to expire, so both kinds of removal take from its
 * front.
 */
import type { CachePrompt } from "../../types";

/** Dynamo's `--selection-cache-ttl-secs` default, in ms. */
export const DEFAULT_SELECTION_CACHE_TTL_MS = 120_000;
/** Dynamo's `--selection-cache-max-entries` default. */
export const DEFAULT_SELECTION_CACHE_MAX_ENTRIES = 4_096;
/**
 * Bytes of hashes the cache holds at most. Dynamo's default is 256 MiB for the whole service; one
 * tracker object lives in an isolate of 128 MB, so it keeps 16 MiB (4,096 selections of about 500
 * blocks each).
 */
export const DEFAULT_SELECTION_CACHE_MAX_BYTES = 16 * 1024 * 1024;

/** Estimated bytes of an entry besides its hashes (the object, its id, the map slot). */
const ENTRY_BYTES = 200;

/** What a replay books: the choice and the normalized facts of the selection that made it. */
export interface PendingSelection {
  workerId: bigint;
  dpRank: number;
  /** Tracking hashes (u64). */
  tracking: BigUint64Array;
  /** Tokens of the prompt. */
  isl: number;
  /** Tokens the chosen rank would prefill; booked as prefill load when `trackPrefillTokens`. */
  effectivePrefillTokens: number;
  trackPrefillTokens: boolean;
  expectedOutputTokens?: number;
  /** What the booking records in the cache index. */
  cachePrompt: CachePrompt | null;
}

export interface PendingSelectionBounds {
  ttlMs: number;
  maxEntries: number;
  maxBytes: number;
}

interface Held {
  entry: PendingSelection;
  /** When the id was first inserted, epoch ms. */
  anchor: number;
  bytes: number;
}

export class PendingSelections {
  private readonly held = new Map<string, Held>();
  private bytesHeld = 0;
  readonly bounds: PendingSelectionBounds;

  constructor(bounds: Partial<PendingSelectionBounds> = {}) {
    this.bounds = {
      ttlMs: bounds.ttlMs ?? DEFAULT_SELECTION_CACHE_TTL_MS,
      maxEntries: bounds.maxEntries ?? DEFAULT_SELECTION_CACHE_MAX_ENTRIES,
      maxBytes: bounds.maxBytes ?? DEFAULT_SELECTION_CACHE_MAX_BYTES,
    };
  }

  get size(): number {
    return this.held.size;
  }

  get bytes(): number {
    return this.bytesHeld;
  }

  /** Keeps `entry` under `id` as of `now` (epoch ms). */
  put(id: string, entry: PendingSelection, now: number): void {
    this.expire(now);
    const bytes = bytesOf(id, entry);
    const previous = this.held.get(id);
    if (previous) {
      this.bytesHeld += bytes - previous.bytes;
      previous.entry = entry;
      previous.bytes = bytes;
    } else {
      this.held.set(id, { entry, anchor: now, bytes });
      this.bytesHeld += bytes;
    }
    for (const [oldest] of this.held) {
      if (this.held.size <= this.bounds.maxEntries && this.bytesHeld <= this.bounds.maxBytes) break;
      this.remove(oldest);
    }
  }

  /** The entry of `id` if it is still pending at `now`; it stays until it is taken or expires. */
  peek(id: string, now: number): PendingSelection | undefined {
    this.expire(now);
    return this.held.get(id)?.entry;
  }

  /** Drops the entry of `id` (a replay used it, or an explicit reservation discards it). */
  remove(id: string): void {
    const held = this.held.get(id);
    if (!held) return;
    this.held.delete(id);
    this.bytesHeld -= held.bytes;
  }

  /** Drops every entry inserted `ttlMs` or longer before `now`. */
  expire(now: number): void {
    for (const [id, held] of this.held) {
      if (now - held.anchor < this.bounds.ttlMs) break;
      this.remove(id);
    }
  }
}

function bytesOf(id: string, entry: PendingSelection): number {
  const cache = entry.cachePrompt;
  const hashes =
    entry.tracking.length + (cache?.blockHashes.length ?? 0) + (cache?.sequenceHashes?.length ?? 0);
  return ENTRY_BYTES + 2 * id.length + 8 * hashes;
}
