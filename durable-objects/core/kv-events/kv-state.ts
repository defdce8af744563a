/**
 * What a tracker knows from engine KV events: the exact index of each rank's cached blocks, the
 * sequence of each rank's publisher (`kv-stream.ts`), and the counters the metrics report. Every
 * change goes through here, from a local call (`kv-intake.ts`), a peer (`kv-merge.ts`) or storage,
 * so that the index, the streams and the store never disagree.
 *
 * Storage is grouped per call, never per event: an accepted call is one journal row of its changes
 * and one stream row (`storage/kv-rows.ts`). A rank's journal is folded into a checkpoint of what
 * the rank holds once it carries more blocks than twice the rank holds (and at least
 * {@link MIN_CHECKPOINT_BLOCKS}), so a restart replays at most about three times the index, and the
 * cost of a checkpoint, spread over the calls that made it due, stays a constant per block.
 */
import type { KvStoredOp, KvStreamInfo } from "../../kv-event-types";
import type { CacheIndex } from "../cache-index/cache-index";
import type { TrackerStore } from "../store";
import type { KvChange, KvEpoch, KvStoredChange, KvStream } from "./kv-stream";
import { streamKey } from "./kv-stream";

/** Fewest journaled blocks of a rank that make a checkpoint due (small ranks checkpoint rarely). */
export const MIN_CHECKPOINT_BLOCKS = 65_536;

/** The exact index as the KV-event wing uses it (`cache-index/event-index.ts`). */
export interface KvIndex extends CacheIndex {
  applyStored(
    workerId: bigint,
    dpRank: number,
    op: KvStoredOp,
    at: number,
  ): { stored: number; orphaned: number; evicted: number };
  applyRemoved(
    workerId: bigint,
    dpRank: number,
    op: { tier: KvStoredOp["tier"]; engineHashes: BigUint64Array },
  ): number;
  clearRank(workerId: bigint, dpRank: number): number;
  rankEntries(workerId: bigint, dpRank: number): number;
  holdingsOf(workerId: bigint, dpRank: number): Iterable<Omit<KvStoredChange, "kind">>;
}

/** Counters since this instance was built (memory only, like every metrics counter). */
export interface KvCounters {
  /** Engine batches applied (local calls and peers' alike). */
  batchesApplied: number;
  /** Batches acknowledged as repeats of applied sequence numbers. */
  batchesIgnored: number;
  /** Local calls refused as out of sequence (409). */
  gaps: number;
  /** Epochs started here or adopted from peers (each clears its rank). */
  epochs: number;
  blocksStored: number;
  blocksRemoved: number;
  /** Stored blocks whose parent the rank did not hold (Dynamo drops them too). */
  blocksOrphaned: number;
  /** Entries the `MAX_CACHED_BLOCKS` cap evicted. */
  blocksEvicted: number;
}

export class KvState {
  readonly streams = new Map<string, KvStream>();
  readonly counters: KvCounters = {
    batchesApplied: 0,
    batchesIgnored: 0,
    gaps: 0,
    epochs: 0,
    blocksStored: 0,
    blocksRemoved: 0,
    blocksOrphaned: 0,
    blocksEvicted: 0,
  };
  /** Per stream: ms from the engine's batch time to its apply here, for the last call (metrics). */
  readonly lagMs = new Map<string, number>();
  /** Workers with at least one stream: their ranks' overlap comes from the events (`sourced-index.ts`). */
  private readonly sourcedRanks = new Map<bigint, number>();
  /** Journaled blocks per stream since its last checkpoint. */
  private readonly journaled = new Map<string, number>();
  /** Told when a worker gains its first stream (its booking-made cache entries are dropped). */
  onSourced: (workerId: bigint) => void = () => {};

  constructor(
    readonly index: KvIndex,
    private readonly store: TrackerStore,
  ) {}

  /** Whether `workerId` has event sources: then its cache view is the events', not the bookings'. */
  sourced(workerId: bigint): boolean {
    return this.sourcedRanks.has(workerId);
  }

  /** Every stream with what its rank holds, sorted by worker then rank (`GET /kv_events`, metrics). */
  list(): KvStreamInfo[] {
    return [...this.streams.entries()]
      .map(([key, s]) => ({
        workerId: s.workerId,
        dpRank: s.dpRank,
        epoch: s.epoch.name,
        nextSeq: s.nextSeq,
        cachedBlocks: this.index.rankEntries(s.workerId, s.dpRank),
        lagMs: this.lagMs.get(key) ?? null,
      }))
      .sort((a, b) => (a.workerId !== b.workerId ? (a.workerId < b.workerId ? -1 : 1) : a.dpRank - b.dpRank));
  }

  stream(workerId: bigint, dpRank: number): KvStream | undefined {
    return this.streams.get(streamKey(workerId, dpRank));
  }

  /** Starts `epoch` on a rank: what the rank held is cleared (the engine behind it started over). */
  startEpoch(workerId: bigint, dpRank: number, epoch: KvEpoch, nextSeq: number): KvStream {
    const key = streamKey(workerId, dpRank);
    const old = this.streams.get(key);
    if (old) this.index.clearRank(workerId, dpRank);
    else this.addSourced(workerId);
    const stream: KvStream = { workerId, dpRank, epoch, nextSeq };
    this.streams.set(key, stream);
    this.journaled.set(key, 0);
    this.counters.epochs++;
    this.store.kvRankCleared?.(workerId, dpRank);
    return stream;
  }

  /**
   * Applies one call's changes to a stream's rank and persists them with the stream's new position:
   * one journal row, one stream row, and a checkpoint when the rank's journal is due for one.
   */
  apply(stream: KvStream, changes: readonly KvChange[], nextSeq: number, batches: number): void {
    stream.nextSeq = nextSeq;
    const blocks = this.applyChanges(stream.workerId, stream.dpRank, changes);
    this.counters.batchesApplied += batches;
    this.store.kvStreamSet?.(stream);
    const key = streamKey(stream.workerId, stream.dpRank);
    const journaled = (this.journaled.get(key) ?? 0) + blocks;
    const held = this.index.rankEntries(stream.workerId, stream.dpRank);
    if (journaled > Math.max(MIN_CHECKPOINT_BLOCKS, 2 * held)) {
      this.store.kvCheckpointed?.(stream.workerId, stream.dpRank, [
        ...this.index.holdingsOf(stream.workerId, stream.dpRank),
      ]);
      this.journaled.set(key, 0);
    } else {
      if (changes.length > 0) this.store.kvApplied?.(stream.workerId, stream.dpRank, changes);
      this.journaled.set(key, journaled);
    }
  }

  /** Changes a rank's blocks without persisting (storage replays them); returns the blocks they name. */
  applyChanges(workerId: bigint, dpRank: number, changes: readonly KvChange[]): number {
    const c = this.counters;
    let blocks = 0;
    for (const change of changes) {
      if (change.kind === "stored") {
        const op: KvStoredOp = { ...change, blockSize: 0 };
        const outcome = this.index.applyStored(workerId, dpRank, op, change.at);
        c.blocksStored += outcome.stored;
        c.blocksOrphaned += outcome.orphaned;
        c.blocksEvicted += outcome.evicted;
        blocks += change.engineHashes.length;
      } else if (change.kind === "removed") {
        c.blocksRemoved += this.index.applyRemoved(workerId, dpRank, change);
        blocks += change.engineHashes.length;
      } else {
        this.index.clearRank(workerId, dpRank);
        blocks++;
      }
    }
    return blocks;
  }

  /** Rebuilds a stream from storage, without reporting to the store. */
  restoreStream(stream: KvStream, journaledBlocks: number): void {
    const key = streamKey(stream.workerId, stream.dpRank);
    if (!this.streams.has(key)) this.addSourced(stream.workerId);
    this.streams.set(key, stream);
    this.journaled.set(key, journaledBlocks);
  }

  /** A worker left: its streams go with it (its index entries go through the cache index). */
  forgetWorker(workerId: bigint): void {
    if (!this.sourcedRanks.delete(workerId)) return;
    for (const [key, stream] of this.streams) {
      if (stream.workerId !== workerId) continue;
      this.streams.delete(key);
      this.journaled.delete(key);
      this.lagMs.delete(key);
    }
    this.store.kvWorkerCleared?.(workerId);
  }

  /** A rank left its worker's range: its stream goes with it. */
  forgetRank(workerId: bigint, dpRank: number): void {
    const key = streamKey(workerId, dpRank);
    if (!this.streams.delete(key)) return;
    this.journaled.delete(key);
    this.lagMs.delete(key);
    const left = (this.sourcedRanks.get(workerId) ?? 1) - 1;
    if (left > 0) this.sourcedRanks.set(workerId, left);
    else this.sourcedRanks.delete(workerId);
    this.store.kvRankCleared?.(workerId, dpRank);
    this.store.kvStreamCleared?.(workerId, dpRank);
  }

  private addSourced(workerId: bigint): void {
    const ranks = this.sourcedRanks.get(workerId) ?? 0;
    this.sourcedRanks.set(workerId, ranks + 1);
    if (ranks === 0) this.onSourced(workerId);
  }
}
