import {
  DEFAULT_OWNED_REQUEST_MAX_AGE_SECONDS,
  DEFAULT_REQUEST_EXPIRY_SECONDS,
  DEFAULT_ROUTER_TTL_SECS,
  MAX_BOOKINGS_PER_OWNER,
  MAX_CACHE_INDEX_ENTRIES,
  MAX_CACHED_BLOCKS,
  MAX_LEASE_TTL_MS,
  MAX_LEASES,
  MAX_LIVE_BLOCKS,
  MAX_LIVE_REQUESTS,
  MAX_RANKS,
  MAX_WORKERS,
} from "../limits";
import type { RegisterInput } from "../types";
import { Book, type Booking } from "./book";
import { ApproximateIndex } from "./cache-index/approximate-index";
import type { CacheIndex } from "./cache-index/cache-index";
import { EventIndex } from "./cache-index/event-index";
import { SourcedIndex } from "./cache-index/sourced-index";
import { CatalogState } from "./catalog/catalog-state";
import { LeaseBook } from "./lease/lease-book";
import { lapse } from "./lease/lease-lapse";
import { KvState } from "./kv-events/kv-state";
import type { LiveRequest } from "./live-request";
import type { WorkerEntry } from "./rank-slot";
import { compareKeys, type EventKey, HybridClock, isNewer } from "./replica/clock";
import { DepartureLog } from "./replica/departure-log";
import type { BindEvent, ReplicaEvent } from "./replica/events";
import { ReplicaRecords } from "./replica/replica-records";
import { NULL_STORE, type TrackerStore } from "./store";

/** How often replication records are swept for ones past the expiry age, ms. */
const PURGE_INTERVAL_MS = 10_000;
/**
 * How long after its earliest deadline the cache index is swept, ms. Its answers already leave out
 * what is past due, so a sweep only reclaims memory: without this slack, bookings at R a second
 * (whose index entries always come due, freed or not) would wake the alarm R times a second.
 */
export const CACHE_SWEEP_SLACK_MS = 1_000;

/** Session bindings as replication sees them: merged by newest key, and part of a snapshot. */
export interface SessionReplica {
  merge(event: BindEvent, now: number): void;
  snapshot(): Iterable<BindEvent>;
}

export interface TrackerLimits {
  maxLiveRequests: number;
  /** Prompt blocks all live requests may hold together (the tracker's memory and storage budget). */
  maxLiveBlocks: number;
  maxWorkers: number;
  maxRanks: number;
  /** (block, rank) entries the cache index holds at most; past it the earliest deadlines go. */
  maxCacheEntries: number;
  /** (block, rank) entries the engine-event index holds at most; past it the oldest go. */
  maxCachedBlocks: number;
  /** Live leases (SPEC §8). */
  maxLeases: number;
  /** Live bookings one owner may hold. */
  maxBookingsPerOwner: number;
}

export interface TrackerOptions {
  model: string;
  tenant: string;
  /** Age after which a live request is removed as if freed, ms. */
  expiryMs?: number;
  /** Age after which an owned booking is removed even while its lease lives, ms. */
  ownedMaxAgeMs?: number;
  /** Write-through port; every mutation reports itself here synchronously, before it returns. */
  store?: TrackerStore;
  limits?: Partial<TrackerLimits>;
  /** This replica's name: the origin of the changes accepted here. */
  origin?: string;
  /** Whether other replicas exist: then changes are emitted and replication records kept. */
  replicated?: boolean;
  /** How long a booking's prompt stays in the cache index after its origin time, ms (`DYN_ROUTER_TTL_SECS`). */
  cacheTtlMs?: number;
}
/**
 * What a tracker is made of, and the primitives that change it: the live book, replication records,
 * the hybrid clock, the write-through store, expiry, restore from storage, and the steps that book,
 * drop and complete requests and persist and remember them. Admission rules (what a client may do)
 * are `Tracker`'s; ordering rules (how another replica's change merges) are `replica-merge.ts`'s.
 */
export abstract class TrackerState {
  readonly model: string;
  readonly tenant: string;
  readonly expiryMs: number;
  readonly ownedMaxAgeMs: number;
  readonly origin: string;
  readonly replicated: boolean;
  readonly book = new Book();
  readonly records: ReplicaRecords;
  /** The selection API's worker catalog of this partition (`core/catalog/`). */
  readonly catalog: CatalogState;
  readonly clock = new HybridClock();
  readonly store: TrackerStore;
  /** Replicated trackers: when prefills left their ranks, which prefill anchors derive from. */
  readonly departures: DepartureLog | null;
  protected readonly limits: TrackerLimits;
  private nextPurge = 0;
  /** `/route`'s session bindings, which replicate with the tracker's changes (set by the object). */
  sessions: SessionReplica | null = null;
  /** Requests removed by expiry since this instance was built (a metrics counter). */
  expiredCount = 0;
  /** Owned bookings freed because their lease lapsed or was deleted, since this instance was built. */
  lapsedCount = 0;
  /** Frontend leases (`core/lease/`), which outlive the book: a lease may precede every worker. */
  readonly leases: LeaseBook;
  /**
   * What each rank has cached (`cache-index/sourced-index.ts`): from engine KV events for workers
   * that send them (`kv`), else as far as bookings tell (reference selection §5). Every booking
   * applied here, local or a peer's, records its prompt with its origin time, so every replica holds
   * the same index. The bookings' part is memory only: a restart rebuilds it from the live requests
   * (`restoreRequest`), so it loses what freed and expired bookings had recorded within the TTL; the
   * events' part is stored (`storage/kv-rows.ts`).
   */
  readonly cache: CacheIndex;
  /** Engine KV events: the exact index, each rank's publisher sequence, their counters. */
  readonly kv: KvState;
  /** Workers added to or removed from the book since this instance was built. */
  private workerChanges = 0;

  constructor(options: TrackerOptions) {
    this.model = options.model;
    this.tenant = options.tenant;
    this.expiryMs = options.expiryMs ?? DEFAULT_REQUEST_EXPIRY_SECONDS * 1000;
    this.ownedMaxAgeMs = options.ownedMaxAgeMs ?? DEFAULT_OWNED_REQUEST_MAX_AGE_SECONDS * 1000;
    this.store = options.store ?? NULL_STORE;
    this.origin = options.origin ?? "primary";
    this.replicated = options.replicated ?? false;
    this.records = new ReplicaRecords(this.store);
    this.catalog = new CatalogState(this.store);
    this.leases = new LeaseBook(this.store, this.book.owned);
    this.departures = this.replicated
      ? new DepartureLog(
          this.book,
          this.store,
          this.expiryMs,
          (workerId, rank) => this.catalog.floorsOf(workerId)?.(rank) ?? this.book.workers.get(workerId)?.key,
        )
      : null;
    this.limits = {
      maxLiveRequests: MAX_LIVE_REQUESTS,
      maxLiveBlocks: MAX_LIVE_BLOCKS,
      maxWorkers: MAX_WORKERS,
      maxRanks: MAX_RANKS,
      maxCacheEntries: MAX_CACHE_INDEX_ENTRIES,
      maxCachedBlocks: MAX_CACHED_BLOCKS,
      maxLeases: MAX_LEASES,
      maxBookingsPerOwner: MAX_BOOKINGS_PER_OWNER,
      ...options.limits,
    };
    // Keyed by sequence hash alone, so that `/add`'s prompts (sequence hashes only) and selection
    // bookings of the same public chain credit each other (`block-table.ts`).
    const approximate = new ApproximateIndex({
      ttlMs: options.cacheTtlMs ?? DEFAULT_ROUTER_TTL_SECS * 1000,
      maxEntries: this.limits.maxCacheEntries,
      keyOnLocal: false,
    });
    this.kv = new KvState(new EventIndex({ maxEntries: this.limits.maxCachedBlocks }), this.store);
    const cache = new SourcedIndex(approximate, this.kv);
    this.kv.onSourced = (workerId) => cache.workerSourced(workerId);
    this.cache = cache;
  }

  /** Grows whenever the worker ids the catalog lists may have changed (for the directory's worker map). */
  get rosterVersion(): number {
    return this.workerChanges + this.catalog.version;
  }

  /** Whether the tracker exists (has at least one worker). */
  get exists(): boolean {
    return this.book.blockSize !== undefined;
  }

  get blockSize(): number | undefined {
    return this.book.blockSize;
  }

  get liveRequests(): number {
    return this.book.requests.size;
  }

  /** The earliest expiry deadline among live requests, or lease deadline, epoch ms. */
  nextDeadline(): number | undefined {
    const request = this.book.firstDue()?.deadline;
    // A lease lapses once the clock reaches its deadline; requests once it passes theirs.
    const lease = this.leases.nextDeadline();
    if (lease === undefined) return request;
    return request === undefined ? lease - 1 : Math.min(request, lease - 1);
  }

  /** When the cache index should next be swept of entries past due, epoch ms (the object's alarm). */
  nextCacheSweep(): number | undefined {
    const deadline = this.cache.nextDeadline();
    return deadline === null ? undefined : deadline + CACHE_SWEEP_SLACK_MS;
  }

  /**
   * Removes every request whose deadline has passed at `now`, and lapses every lease whose
   * deadline it reached, in time order. Each request is removed at its own deadline (which is what a
   * prefill re-anchor sees), each lapse frees at the lease's, so lazy and alarm-driven expiry agree,
   * and replicas, which share deadlines, expire the same requests at the same moments.
   * @returns how many requests expired.
   */
  expire(now: number): number {
    let expired = 0;
    for (;;) {
      const first = this.book.firstDue();
      const req = first && first.deadline < now ? first : null;
      const lease = this.leases.due(now);
      if (lease && (!req || lease.deadline! <= req.deadline)) {
        lapse(this, lease.owner, lease.deadline!, now);
        continue;
      }
      if (!req) break;
      if (this.replicated) this.remember(req);
      this.dropRequest(req, req.deadline);
      expired++;
    }
    this.expiredCount += expired;
    this.cache.expire(now);
    if (now >= this.nextPurge) {
      this.nextPurge = now + PURGE_INTERVAL_MS;
      if (this.replicated) {
        this.records.purge(now, this.expiryMs);
        // A grant or booking older than this cannot arrive alive: its lease lapsed long ago.
        this.leases.purge(now - this.ownedMaxAgeMs - MAX_LEASE_TTL_MS);
        this.departures?.prune(now);
      } else {
        // Alone, every later grant is made after every cut (the clock only moves on): cuts have
        // ended what they end and judge nothing more, so a lapsed lease is forgotten at once.
        this.leases.purge(Number.POSITIVE_INFINITY);
      }
    }
    return expired;
  }

  /**
   * Registered workers as registered (card and type included), in registration order: the order of
   * their keys, which every replica agrees on and which survives a restart once keys are stored.
   */
  registrations(): RegisterInput[] {
    return [...this.book.workers.values()].sort((a, b) => compareKeys(a.key, b.key)).map((w) => w.input);
  }

  /** The live request `requestId`, for callers that persist or replicate it. */
  request(requestId: string): LiveRequest | undefined {
    return this.book.requests.get(requestId);
  }

  /** The prompt hashes of a live request. */
  promptOf(req: LiveRequest): BigUint64Array {
    return this.book.promptOf(req);
  }

  /** Rebuilds a worker from storage, without reporting to the store. */
  restoreWorker(input: RegisterInput, key: EventKey = { ts: 0, origin: this.origin }): void {
    this.clock.observe(key.ts);
    const entry = this.book.insertWorker(input, key);
    this.departures?.attach(entry, this.catalog.floorsOf(input.workerId));
  }

  /**
   * Rebuilds a live request from storage, without reporting to the store. Call in the original add
   * order so each rank's prefill FIFO comes back in the same order.
   * @param prefillDone whether its prefill had completed.
   * @param anchorAt when it became its rank's prefill anchor, if that was after its add.
   */
  restoreRequest(
    booking: Booking,
    startedAt: number,
    prefillDone: boolean,
    anchorAt?: number,
    key: EventKey = { ts: 0, origin: this.origin },
    deadline = startedAt + this.expiryMs,
    prefillKey?: EventKey,
  ): void {
    const slot = this.book.slotOf(booking.workerId, booking.dpRank);
    if (!slot || this.book.requests.has(booking.requestId)) return;
    this.clock.observe(key.ts);
    const req = this.book.insertRequest(booking, key, startedAt, deadline, prefillDone);
    if (prefillKey) {
      this.clock.observe(prefillKey.ts);
      req.prefillTs = prefillKey.ts;
      req.prefillOrigin = prefillKey.origin;
    }
    if (anchorAt !== undefined && slot.prefill.head === req) slot.prefill.anchorAt = anchorAt;
    this.departures?.restoreBooking(req);
    this.recordCache(booking, startedAt);
  }

  /** A key for a change accepted here at `now`. */
  stamp(now: number): EventKey {
    return { ts: this.clock.tick(now), origin: this.origin };
  }

  /** Adds a registered worker to the book and persists it (admission already decided). */
  registerWorker(event: Extract<ReplicaEvent, { type: "register" }>): WorkerEntry {
    const { ts, origin, type: _type, ...input } = event;
    const entry = this.book.insertWorker(input, { ts, origin });
    this.departures?.attach(entry);
    this.store.workerAdded(input, { ts, origin });
    this.workerChanges++;
    return entry;
  }

  /** Removes a worker with its requests and persists that; the last one deletes the tracker. */
  removeWorker(entry: WorkerEntry, at: number): LiveRequest[] {
    const dropped = this.book.removeWorker(entry, at);
    // What the worker had cached goes with it (Dynamo: `remove_worker`); frees leave it.
    this.cache.removeWorker(entry.workerId);
    this.workerChanges++;
    if (this.departures) for (const req of dropped) this.departures.departed(req);
    if (this.exists) this.store.workerRemoved(entry.workerId);
    else this.store.trackerDeleted();
    return dropped;
  }

  /**
   * Books a request (admission already decided) and persists it.
   * @param key the add's key; `startedAt` and `deadline` as an add event carries them.
   * @param prefillKey the key of a completion that reached this replica before the add.
   */
  bookRequest(
    booking: Booking,
    key: EventKey,
    startedAt: number,
    deadline: number,
    prefillKey?: EventKey,
  ): LiveRequest {
    const req = this.book.insertRequest(booking, key, startedAt, deadline, prefillKey !== undefined);
    if (prefillKey) {
      req.prefillTs = prefillKey.ts;
      req.prefillOrigin = prefillKey.origin;
    }
    this.store.requestAdded(req, booking);
    this.recordCache(booking, startedAt);
    return req;
  }

  /**
   * Records a booking's prompt on its rank in the cache index as of `startedAt`, its origin time.
   * Recording again is harmless (a deadline only ever moves later), so a booking placed twice (a
   * re-registration re-placing it, a snapshot) leaves the index as one recording does.
   */
  recordCache(booking: Booking, startedAt: number): void {
    const prompt = booking.cachePrompt;
    if (prompt === null) return;
    const sequenceHashes = prompt?.sequenceHashes ?? booking.hashes;
    // A prompt known only by its sequence hashes passes them as its local ones (`block-table.ts`).
    const localHashes = prompt?.blockHashes ?? sequenceHashes;
    this.cache.recordBooking(booking.workerId, booking.dpRank, { localHashes, sequenceHashes }, startedAt);
  }

  /** Ends a live request at `at` and persists that. */
  dropRequest(req: LiveRequest, at: number): void {
    const anchor = this.book.drop(req, at);
    if (anchor) this.store.anchorMoved(anchor, anchor.slot.prefill.anchorAt);
    this.store.requestRemoved(req);
    this.departures?.departed(req);
  }

  /**
   * Ends a live request's pending prefill at `at` (if pending) and persists that, with the
   * completion's key: a newer completion of a booking whose prefill is done only updates the key.
   */
  completePrefill(req: LiveRequest, at: number, key: EventKey): void {
    req.prefillTs = key.ts;
    req.prefillOrigin = key.origin;
    const anchor = req.inPrefill ? this.book.dequeuePrefill(req, at) : null;
    this.store.prefillCompleted(req);
    if (anchor) this.store.anchorMoved(anchor, anchor.slot.prefill.anchorAt);
  }

  /** The key of a booking's newest prefill completion, if it has one. */
  prefillKeyOf(req: LiveRequest): EventKey | undefined {
    return Number.isNaN(req.prefillTs) ? undefined : { ts: req.prefillTs, origin: req.prefillOrigin };
  }

  /**
   * Keeps a departing booking's keys as records (replicated trackers), for what may still arrive:
   * its add's key, so an older add of the id stays dead once it left without a free (expired, or
   * gone with its worker), and its completion's, which a newer add of the id may precede.
   */
  remember(req: LiveRequest): void {
    const key = { ts: req.addTs, origin: req.origin };
    if (isNewer(key, this.records.freed.get(req.id))) this.records.setFreed(req.id, key);
    this.rememberPrefill(req);
  }

  /** Keeps a departing booking's completion key as a mark (see {@link remember}). */
  rememberPrefill(req: LiveRequest): void {
    const key = this.prefillKeyOf(req);
    if (key && isNewer(key, this.records.marks.get(req.id))) this.records.setMark(req.id, key);
  }

  /** Ships a change made beside the book (a session binding) like the tracker's own. */
  emitExternal(event: ReplicaEvent): void {
    this.emit(event);
  }

  protected emit(event: ReplicaEvent): void {
    if (this.replicated) this.store.emitted?.(event);
  }
}
