/**
 * The tracker's cache index: per worker, the engine-event index once the worker has event sources
 * (SPEC §9: its first accepted `/kv_events` call, here or at a peer), else the approximate index of
 * its bookings (SPEC §7). A worker's overlap rows come from one of the two, never both, so an
 * engine's exact view is not inflated by guesses: when a worker gains its first stream, what its
 * bookings had recorded is dropped, and its later bookings record nothing. Every replica decides
 * alike, from the same changes; until a worker's first events reach a replica, that replica still
 * answers for it from bookings.
 */
import type { CacheIndex, CacheIndexStats, PromptBlocks, RankOverlap, RouterEvent } from "./cache-index";
import type { ApproximateIndex } from "./approximate-index";

/** Which workers the event index answers for, and the index itself. */
export interface EventSource {
  readonly index: CacheIndex;
  sourced(workerId: bigint): boolean;
  /** A worker left (or one of its ranks): its streams go with its entries. */
  forgetWorker(workerId: bigint): void;
  forgetRank(workerId: bigint, dpRank: number): void;
}

export class SourcedIndex implements CacheIndex {
  constructor(
    readonly approximate: ApproximateIndex,
    private readonly events: EventSource,
  ) {}

  /** A worker's first stream: its booking-made entries go (`KvState.onSourced`). */
  workerSourced(workerId: bigint): void {
    this.approximate.removeWorker(workerId);
  }

  recordBooking(workerId: bigint, dpRank: number, prompt: PromptBlocks, at: number): number {
    if (this.events.sourced(workerId)) return 0;
    return this.approximate.recordBooking(workerId, dpRank, prompt, at);
  }

  overlap(prompt: PromptBlocks, now: number): RankOverlap[] {
    const guessed = this.approximate.overlap(prompt, now);
    const exact = this.events.index.overlap(prompt, now);
    if (exact.length === 0) return guessed;
    if (guessed.length === 0) return exact;
    return mergeRows(guessed, exact);
  }

  removeWorker(workerId: bigint): number {
    const removed = this.approximate.removeWorker(workerId) + this.events.index.removeWorker(workerId);
    this.events.forgetWorker(workerId);
    return removed;
  }

  removeRank(workerId: bigint, dpRank: number): number {
    const removed =
      this.approximate.removeRank(workerId, dpRank) + this.events.index.removeRank(workerId, dpRank);
    this.events.forgetRank(workerId, dpRank);
    return removed;
  }

  expire(now: number): number {
    return this.approximate.expire(now);
  }

  nextDeadline(): number | null {
    return this.approximate.nextDeadline();
  }

  /** Both indexes together; each one's own figures are `approximate.stats()` and the event index's. */
  stats(): CacheIndexStats {
    const a = this.approximate.stats();
    const e = this.events.index.stats();
    return {
      entries: a.entries + e.entries,
      blocks: a.blocks + e.blocks,
      ranks: a.ranks + e.ranks,
      maxEntries: a.maxEntries + e.maxEntries,
      evicted: a.evicted + e.evicted,
      expired: a.expired + e.expired,
      memoryBytes: a.memoryBytes + e.memoryBytes,
    };
  }

  /** Both dumps, ranks in `overlap`'s order (a rank is in one of them only), events renumbered. */
  dump(): RouterEvent[] {
    const events = [...this.approximate.dump(), ...this.events.index.dump()];
    events.sort((a, b) =>
      a.worker_id !== b.worker_id ? (a.worker_id < b.worker_id ? -1 : 1) : a.event.dp_rank - b.event.dp_rank,
    );
    for (const [i, e] of events.entries()) e.event.event_id = i;
    return events;
  }
}

/** Two row lists in (worker, rank) order merged into one; a rank in both keeps the exact row. */
function mergeRows(guessed: RankOverlap[], exact: RankOverlap[]): RankOverlap[] {
  const out: RankOverlap[] = [];
  let i = 0;
  let j = 0;
  while (i < guessed.length || j < exact.length) {
    const g = guessed[i];
    const e = exact[j];
    const order = !g ? 1 : !e ? -1 : compareRank(g, e);
    if (order < 0) out.push(guessed[i++]!);
    else {
      if (order === 0) i++;
      out.push(exact[j++]!);
    }
  }
  return out;
}

function compareRank(a: RankOverlap, b: RankOverlap): number {
  if (a.workerId !== b.workerId) return a.workerId < b.workerId ? -1 : 1;
  return a.dpRank - b.dpRank;
}
