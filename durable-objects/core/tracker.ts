import {
  DEFAULT_REQUEST_EXPIRY_SECONDS,
  MAX_HASHES_PER_CALL,
  MAX_LIVE_BLOCKS,
  MAX_LIVE_REQUESTS,
  MAX_RANKS,
  MAX_WORKERS,
} from "../limits";
import type { AddInput, PotentialLoad, RankLoad, RegisterInput, Result, WorkerInfo } from "../types";
import { Book, type Booking } from "./book";
import { compareKeys, type EventKey, HybridClock, isNewer } from "./clock";
import type { AddEvent, BindEvent, ReplicaEvent } from "./events";
import type { LiveRequest } from "./live-request";
import { fail, text } from "./messages";
import type { WorkerEntry } from "./rank-slot";
import { reconcileBlockSize } from "./replica-merge";
import { ReplicaRecords } from "./replica-records";
import { NULL_STORE, type TrackerStore } from "./store";

const U32_MAX = 2 ** 32 - 1;
/** How often replication records are swept for ones past the expiry age, ms. */
const PURGE_INTERVAL_MS = 10_000;

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
}

export interface TrackerOptions {
  model: string;
  tenant: string;
  /** Age after which a live request is removed as if freed, ms. */
  expiryMs?: number;
  /** Write-through port; every mutation reports itself here synchronously, before it returns. */
  store?: TrackerStore;
  limits?: Partial<TrackerLimits>;
  /** This replica's name: the origin of the changes accepted here. */
  origin?: string;
  /** Whether other replicas exist: then changes are emitted and replication records kept. */
  replicated?: boolean;
}

/**
 * The slot tracker of one (model, tenant): Dynamo's `ActiveSequencesMultiWorker` behind the
 * standalone registry's admission rules (reference §1–§4), with the clock passed in (`now`, epoch
 * ms). A tracker exists from its first registered worker, which fixes its block size, until its last
 * worker leaves. Every call first expires what is due at `now`. Each accepted change gets a key from
 * the hybrid clock; a replicated tracker emits it, and merges other replicas' changes with
 * `applyReplicaEvent` (`replica-merge.ts`).
 */
export class Tracker {
  readonly model: string;
  readonly tenant: string;
  readonly expiryMs: number;
  readonly origin: string;
  readonly replicated: boolean;
  readonly book = new Book();
  readonly records: ReplicaRecords;
  readonly clock = new HybridClock();
  readonly store: TrackerStore;
  private readonly limits: TrackerLimits;
  private nextPurge = 0;
  /** `/route`'s session bindings, which replicate with the tracker's changes (set by the object). */
  sessions: SessionReplica | null = null;
  /** Requests removed by expiry since this instance was built (a metrics counter). */
  expiredCount = 0;

  constructor(options: TrackerOptions) {
    this.model = options.model;
    this.tenant = options.tenant;
    this.expiryMs = options.expiryMs ?? DEFAULT_REQUEST_EXPIRY_SECONDS * 1000;
    this.store = options.store ?? NULL_STORE;
    this.origin = options.origin ?? "primary";
    this.replicated = options.replicated ?? false;
    this.records = new ReplicaRecords(this.store);
    this.limits = {
      maxLiveRequests: MAX_LIVE_REQUESTS,
      maxLiveBlocks: MAX_LIVE_BLOCKS,
      maxWorkers: MAX_WORKERS,
      maxRanks: MAX_RANKS,
      ...options.limits,
    };
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

  /** The earliest expiry deadline among live requests, epoch ms. */
  nextDeadline(): number | undefined {
    return this.book.expiry.head?.deadline;
  }

  register(input: RegisterInput, now: number): Result<{ created: boolean }> {
    this.expire(now);
    const { workerId, blockSize, dpStart, dpSize } = input;
    if (blockSize === 0) return fail("invalid_block_size", text.invalidBlockSize());
    if (dpSize === 0) return fail("invalid_dp_size", text.invalidDpSize());
    if (dpStart + dpSize > U32_MAX) return fail("invalid_dp_range", text.invalidDpRange(dpStart, dpSize));
    const created = !this.exists;
    if (!created && blockSize !== this.blockSize) {
      return fail(
        "block_size_mismatch",
        text.blockSizeMismatch(this.model, this.tenant, this.blockSize!, blockSize),
      );
    }
    if (this.book.workers.has(workerId)) {
      return fail("duplicate_worker", text.duplicateWorker(workerId, this.model, this.tenant));
    }
    if (this.book.workers.size >= this.limits.maxWorkers) {
      return fail(
        "limit_exceeded",
        `worker limit reached: at most ${this.limits.maxWorkers} workers per tracker`,
      );
    }
    if (this.book.rankCount + dpSize > this.limits.maxRanks) {
      return fail(
        "limit_exceeded",
        `rank limit reached: at most ${this.limits.maxRanks} data-parallel ranks per tracker (dp_size=${dpSize})`,
      );
    }
    const key = this.stamp(now);
    this.registerWorker({ ...key, type: "register", ...input });
    if (this.replicated) {
      // This registration is newer than anything seen: older records of the worker are void.
      this.records.clearGone(workerId);
      this.records.clearExcluded(workerId);
      for (const orphan of this.records.orphansOf(workerId)) this.records.retireOrphan(orphan);
    }
    this.emit({ ...key, type: "register", ...input });
    return { ok: true, created };
  }

  unregister(workerId: bigint, now: number): Result<{ deleted: boolean }> {
    this.expire(now);
    const worker = this.book.workers.get(workerId);
    if (!worker) return fail("worker_not_found", text.workerNotFound(workerId, this.model, this.tenant));
    const key = this.stamp(now);
    // Dynamo drops the worker's requests silently (reference §2.1); replicas drop them on this event.
    const dropped = this.removeWorker(worker, now);
    if (this.replicated) {
      for (const req of dropped) this.remember(req);
      this.records.setGone(workerId, key);
      for (const orphan of this.records.orphansOf(workerId)) this.records.retireOrphan(orphan);
      // The oldest registered worker may have been this one: another block size may now decide.
      reconcileBlockSize(this);
    }
    this.emit({ ...key, type: "unregister", workerId });
    return { ok: true, deleted: !this.exists };
  }

  add(input: AddInput, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const slot = this.book.slotOf(input.workerId, input.dpRank);
    if (!slot) return fail("rank_not_found", text.rankNotFound(input.workerId, input.dpRank));
    const existing = this.book.requests.get(input.requestId);
    if (existing) {
      return fail(
        "duplicate_request",
        text.duplicateRequest(input.requestId, existing.slot.workerId, existing.slot.dpRank),
      );
    }
    if (input.hashes.length > MAX_HASHES_PER_CALL) {
      return fail(
        "too_large",
        `sequence_hashes has ${input.hashes.length} hashes; at most ${MAX_HASHES_PER_CALL}`,
      );
    }
    if (this.book.requests.size >= this.limits.maxLiveRequests) {
      return fail(
        "limit_exceeded",
        `live request limit reached: at most ${this.limits.maxLiveRequests} live requests per tracker`,
      );
    }
    if (this.book.liveBlocks + input.hashes.length > this.limits.maxLiveBlocks) {
      return fail(
        "limit_exceeded",
        `live block budget reached: live requests may hold at most ${this.limits.maxLiveBlocks} prompt blocks per tracker (${this.book.liveBlocks} held, this request has ${input.hashes.length})`,
      );
    }
    const key = this.stamp(now);
    // Spelled out: a spread of the key and then of `input` takes V8's generic runtime path, about
    // 15 µs an event on the benchmark machine, more than the rest of an add (`npm run bench`).
    const event: AddEvent = {
      ts: key.ts,
      origin: key.origin,
      type: "add",
      requestId: input.requestId,
      workerId: input.workerId,
      dpRank: input.dpRank,
      hashes: input.hashes,
      newIslTokens: input.newIslTokens,
      expectedOutputTokens: input.expectedOutputTokens,
      expectedPrefillDurationMs: input.expectedPrefillDurationMs,
      startedAt: now,
      deadline: now + this.expiryMs,
    };
    this.bookRequest(event);
    if (this.replicated) {
      // Older records of this id lose to this add; its own key lives with the booking until it leaves.
      this.records.clearFreed(input.requestId);
      this.records.clearMark(input.requestId);
      this.records.clearOrphan(input.requestId);
    }
    this.emit(event);
    return { ok: true };
  }

  prefillComplete(requestId: string, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const req = this.book.requests.get(requestId);
    if (!req) return fail("request_not_found", text.requestNotFound(requestId));
    // A repeat changes nothing and is not shipped again.
    if (req.inPrefill) {
      const key = this.stamp(now);
      this.completePrefill(req, now, key);
      this.emit({ ts: key.ts, origin: key.origin, type: "prefill_complete", requestId });
    }
    return { ok: true };
  }

  free(requestId: string, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const key = this.stamp(now);
    const req = this.book.requests.get(requestId);
    // This free is newer than everything seen here, so nothing of the booking needs remembering.
    if (req) this.dropRequest(req, now);
    if (this.replicated) {
      // Shipped and remembered even for an id unknown here: its add may be on its way from a peer.
      this.records.setFreed(requestId, key);
      this.records.clearOrphan(requestId);
      this.records.clearMark(requestId);
      this.emit({ ...key, type: "free", requestId });
    }
    return { ok: true };
  }

  /**
   * Removes every request whose deadline has passed at `now`. Each is removed at its own deadline
   * (which is what a prefill re-anchor sees), so lazy and alarm-driven expiry agree, and replicas,
   * which share deadlines, expire the same requests at the same moments.
   * @returns how many requests expired.
   */
  expire(now: number): number {
    let expired = 0;
    for (let req = this.book.expiry.head; req && req.deadline < now; req = this.book.expiry.head) {
      if (this.replicated) this.remember(req);
      this.dropRequest(req, req.deadline);
      expired++;
    }
    this.expiredCount += expired;
    if (this.replicated && now >= this.nextPurge) {
      this.nextPurge = now + PURGE_INTERVAL_MS;
      this.records.purge(now, this.expiryMs);
    }
    return expired;
  }

  listWorkers(now: number): WorkerInfo[] {
    this.expire(now);
    return this.book.listWorkers();
  }

  listLoads(now: number): RankLoad[] {
    this.expire(now);
    return this.book.listLoads(now);
  }

  potentialLoads(
    hashes: BigUint64Array,
    newIslTokens: number,
    now: number,
  ): Result<{ loads: PotentialLoad[] }> {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    return { ok: true, loads: this.book.potentialLoads(hashes, newIslTokens, now) };
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
    this.book.insertWorker(input, key);
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
  }

  /** A key for a change accepted here at `now`. */
  stamp(now: number): EventKey {
    return { ts: this.clock.tick(now), origin: this.origin };
  }

  /** Adds a registered worker to the book and persists it (admission already decided). */
  registerWorker(event: Extract<ReplicaEvent, { type: "register" }>): WorkerEntry {
    const { ts, origin, type: _type, ...input } = event;
    const entry = this.book.insertWorker(input, { ts, origin });
    this.store.workerAdded(input, { ts, origin });
    return entry;
  }

  /** Removes a worker with its requests and persists that; the last one deletes the tracker. */
  removeWorker(entry: WorkerEntry, at: number): LiveRequest[] {
    const dropped = this.book.removeWorker(entry, at);
    if (this.exists) this.store.workerRemoved(entry.workerId);
    else this.store.trackerDeleted();
    return dropped;
  }

  /** Books a request (admission already decided) and persists it. */
  bookRequest(event: AddEvent, prefillKey?: EventKey): LiveRequest {
    const req = this.book.insertRequest(event, event, event.startedAt, event.deadline, prefillKey !== undefined);
    if (prefillKey) {
      req.prefillTs = prefillKey.ts;
      req.prefillOrigin = prefillKey.origin;
    }
    this.store.requestAdded(req, event);
    return req;
  }

  /** Ends a live request at `at` and persists that. */
  dropRequest(req: LiveRequest, at: number): void {
    const anchor = this.book.drop(req, at);
    if (anchor) this.store.anchorMoved(anchor, anchor.slot.prefill.anchorAt);
    this.store.requestRemoved(req);
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

  private emit(event: ReplicaEvent): void {
    if (this.replicated) this.store.emitted?.(event);
  }
}
