import type { Book } from "../book";
import { compareKeys, type EventKey, physicalMs } from "./clock";
import type { AddEvent, TimelineEvent } from "./events";
import { bookingOf, type LiveRequest } from "../live-request";
import { MAX_PREFILL_TIMELINES } from "../../limits";
import { RankDepartures } from "./rank-departures";
import type { WorkerEntry } from "../rank-slot";
import type { TrackerStore } from "../store";

/** Timeline adds keep no prompt: only their keys, rank, tokens and times matter here. */
const NO_HASHES = new BigUint64Array(0);

/**
 * Dynamo's prefill anchor (reference §1.3: the FIFO front decays from the moment it became the
 * front) restated so that every replica computes the same number once it has the same changes,
 * whatever order they came in:
 *
 *   anchorAt(H) = max(H.startedAt, max{ end(d) : d an add of H's rank, key(d) < key(H) })
 *
 * over the adds with prefill tokens booked on the rank since its worker's current registration.
 * `end(d)` is when d's prefill ended: the earliest of its deadline and the time (key ms) of the
 * first change of its request id after it (its completion or free, or a newer add that replaced
 * it). In one tracker that is exactly when the front left: the entries ahead of H are those with
 * smaller keys, H became the front when the last of them left, and those that left before H was
 * booked end no later than H.startedAt.
 *
 * So each request id keeps its timeline (adds, frees, completions by key), and each rank the ends
 * of its adds (`RankDepartures`). An add is entered whatever became of it here (booked, orphaned,
 * dead on arrival), a change that arrives before its add waits in the timeline, and ends only move
 * earlier. A timeline keeps changes for twice the expiry age: an add older than that ended before
 * any live booking started (its deadline passed an expiry age ago), whatever came after it; rank
 * entries are kept until an expiry age past their end. Timelines are persisted through the store
 * (booked adds are already in the requests table, so they are written when they leave the book)
 * and shipped in snapshots (`replication/snapshot.ts`).
 */
export class DepartureLog {
  private readonly timelines = new Map<string, TimelineEvent[]>();
  private readonly ranks = new Map<bigint, Map<number, RankDepartures>>();

  constructor(
    private readonly book: Book,
    private readonly store: TrackerStore,
    private readonly expiryMs: number,
    /** The key a rank's current incarnation started after: its worker's registration by default. */
    private readonly floorOf: (workerId: bigint, dpRank: number) => EventKey | undefined = (workerId) =>
      book.workers.get(workerId)?.key,
  ) {}

  /**
   * Enters a change at `now` (its own or another replica's), and persists it unless it is an add
   * now booked here. Idempotent: a key already there changes nothing.
   */
  record(event: TimelineEvent, now: number, persist = true): void {
    if (physicalMs(event.ts) < now - 2 * this.expiryMs) return;
    let timeline = this.timelines.get(event.requestId);
    if (!timeline) {
      timeline = [];
      this.timelines.set(event.requestId, timeline);
    }
    let i = timeline.length;
    while (i > 0 && compareKeys(timeline[i - 1]!, event) > 0) i--;
    const kept = event.type === "add" ? withoutPrompt(event) : event;
    const same = i > 0 && compareKeys(timeline[i - 1]!, event) === 0 ? timeline[i - 1]! : undefined;
    if (same) {
      // A snapshot ships a departed add's tombstone as a free with the add's own key: the add wins.
      if (same.type === "add" || kept.type !== "add") return;
      timeline[--i] = kept;
    } else timeline.splice(i, 0, kept);
    const next = timeline[i + 1];
    const prev = timeline[i - 1];
    if (kept.type === "add") this.setEnd(kept, next ? physicalMs(next.ts) : Number.POSITIVE_INFINITY, now);
    if (prev?.type === "add") {
      this.ranks.get(prev.workerId)?.get(prev.dpRank)?.lower(prev.ts, prev.origin, endOf(prev, kept));
    }
    if (persist && !(kept.type === "add" && this.isBooked(kept))) this.store.timelineSet?.(kept);
  }

  /** A booking left the book: its add is now kept by the timeline alone, so it is persisted. */
  departed(req: LiveRequest): void {
    const timeline = this.timelines.get(req.id);
    const add = timeline?.find((e) => e.ts === req.addTs && e.origin === req.origin);
    if (add) this.store.timelineSet?.(add);
    else this.record(bookingOf(req, NO_HASHES), Number.NEGATIVE_INFINITY);
  }

  /** Enters a booking restored from storage (its row is the requests table's). */
  restoreBooking(req: LiveRequest): void {
    this.record(bookingOf(req, NO_HASHES), Number.NEGATIVE_INFINITY, false);
  }

  /** Enters a change restored from storage. */
  restore(event: TimelineEvent): void {
    this.record(event, Number.NEGATIVE_INFINITY, false);
  }

  /**
   * Gives a newly registered worker's ranks their departures, less those booked before this
   * registration: they belong to an earlier incarnation of the rank, which this one replaced. A
   * catalog worker's rank lives on across its changes that kept it: `floorOf` gives the key each
   * rank's incarnation started after (none: it keeps everything), instead of the registration's.
   */
  attach(worker: WorkerEntry, floorOf?: (rank: number) => EventKey | undefined): void {
    for (const slot of worker.slots) {
      const departures = this.rank(worker.workerId, slot.dpRank);
      const floor = floorOf ? floorOf(slot.dpRank) : worker.key;
      if (floor) departures.dropBefore(floor.ts, floor.origin);
      slot.prefill.departures = departures;
    }
  }

  /**
   * Forgets what can no longer move an anchor at `now` (see the class comment), and past
   * {@link MAX_PREFILL_TIMELINES} request ids also the oldest of what could: memory then stays
   * bounded whatever the request rate, at the price of exactness for a change that arrives later
   * than the shortened window (see the constant).
   */
  prune(now: number): void {
    const oldest = Math.max(now - 2 * this.expiryMs, this.capCutoff());
    for (const [id, timeline] of this.timelines) {
      let n = 0;
      while (n < timeline.length && physicalMs(timeline[n]!.ts) < oldest) n++;
      if (n === timeline.length) this.timelines.delete(id);
      else if (n > 0) timeline.splice(0, n);
    }
    for (const [workerId, ranks] of this.ranks) {
      const attached = this.book.workers.has(workerId);
      for (const [dpRank, departures] of ranks) {
        departures.prune(now - this.expiryMs);
        if (departures.length === 0 && !attached) ranks.delete(dpRank);
      }
      if (ranks.size === 0) this.ranks.delete(workerId);
    }
    this.store.timelinePurged?.(oldest * 1024);
  }

  /**
   * The timelines as changes to ship, each request id's newest first, so a departed add reaches a
   * peer after the change that ended it and is dead on arrival there rather than booked (it has no
   * prompt). Read from a copy: the log keeps changing while a snapshot is paged out.
   */
  *shippable(): Generator<TimelineEvent> {
    const timelines = [...this.timelines.values()].map((timeline) => timeline.slice());
    for (const timeline of timelines) for (let i = timeline.length - 1; i >= 0; i--) yield timeline[i]!;
  }

  /**
   * The time (ms) before which changes go so that at most the cap's number of request ids stay:
   * the newest change of the id that is last to go (ids in the order they were first seen).
   */
  private capCutoff(): number {
    let over = this.timelines.size - MAX_PREFILL_TIMELINES;
    if (over <= 0) return Number.NEGATIVE_INFINITY;
    let cutoff = Number.NEGATIVE_INFINITY;
    for (const timeline of this.timelines.values()) {
      if (over-- <= 0) break;
      cutoff = Math.max(cutoff, physicalMs(timeline[timeline.length - 1]!.ts) + 1);
    }
    return cutoff;
  }

  /** Changes kept, over all request ids (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const timeline of this.timelines.values()) n += timeline.length;
    return n;
  }

  private setEnd(add: AddEvent, nextMs: number, now: number): void {
    // Only a queued prefill moves the anchor (Dynamo queues a request only if it has tokens).
    if (add.newIslTokens === 0) return;
    const end = Math.min(add.deadline, nextMs);
    if (end < now - this.expiryMs) return;
    const floor = this.floorOf(add.workerId, add.dpRank);
    if (floor && compareKeys(add, floor) < 0) return;
    this.rank(add.workerId, add.dpRank).set(add.ts, add.origin, end);
  }

  private rank(workerId: bigint, dpRank: number): RankDepartures {
    let ranks = this.ranks.get(workerId);
    if (!ranks) {
      ranks = new Map();
      this.ranks.set(workerId, ranks);
    }
    let departures = ranks.get(dpRank);
    if (!departures) {
      departures = new RankDepartures();
      ranks.set(dpRank, departures);
    }
    return departures;
  }

  private isBooked(add: AddEvent): boolean {
    const live = this.book.requests.get(add.requestId);
    return live !== undefined && live.addTs === add.ts && live.origin === add.origin;
  }
}

/** When `add`'s prefill ended if `next` is the first change of its request id after it. */
function endOf(add: AddEvent, next: TimelineEvent): number {
  return Math.min(add.deadline, physicalMs(next.ts));
}

function withoutPrompt(e: AddEvent): AddEvent {
  // Spelled out, not spread: see `Tracker.add`.
  const add: AddEvent = {
    ts: e.ts,
    origin: e.origin,
    type: "add",
    requestId: e.requestId,
    workerId: e.workerId,
    dpRank: e.dpRank,
    hashes: NO_HASHES,
    newIslTokens: e.newIslTokens,
    startedAt: e.startedAt,
    deadline: e.deadline,
  };
  if (e.expectedOutputTokens !== undefined) add.expectedOutputTokens = e.expectedOutputTokens;
  if (e.expectedPrefillDurationMs !== undefined) add.expectedPrefillDurationMs = e.expectedPrefillDurationMs;
  return add;
}
