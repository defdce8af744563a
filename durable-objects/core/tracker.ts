import {
  DEFAULT_REQUEST_EXPIRY_SECONDS,
  MAX_HASHES_PER_CALL,
  MAX_LIVE_REQUESTS,
  MAX_RANKS,
  MAX_WORKERS,
} from "../limits";
import type { AddInput, PotentialLoad, RankLoad, RegisterInput, Result, WorkerInfo } from "../types";
import { ExpiryList } from "./expiry-list";
import { LiveRequest } from "./live-request";
import { fail, text } from "./messages";
import { PromptTrie } from "./prompt-trie";
import { RankSlot, type WorkerEntry } from "./rank-slot";
import { NULL_STORE, type TrackerStore } from "./store";

/** Dynamo computes `dp_start + dp_size` with u32 `checked_add`, so an end of exactly 2^32 overflows. */
const U32_MAX = 2 ** 32 - 1;

export interface TrackerLimits {
  maxLiveRequests: number;
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
}

/**
 * The slot tracker of one (model, tenant): Dynamo's `ActiveSequencesMultiWorker` behind the
 * standalone registry's rules (reference §1–§4), with the clock passed in (`now`, epoch ms) so it
 * runs anywhere. A tracker exists from its first registered worker, which fixes its block size,
 * until its last worker leaves. Every call first expires what is due at `now`.
 */
export class Tracker {
  readonly model: string;
  readonly tenant: string;
  readonly expiryMs: number;
  private readonly store: TrackerStore;
  private readonly limits: TrackerLimits;
  private blockSizeValue: number | undefined;
  private readonly workers = new Map<bigint, WorkerEntry>();
  private readonly requests = new Map<string, LiveRequest>();
  private readonly trie = new PromptTrie();
  private readonly expiry = new ExpiryList();
  private sorted: RankSlot[] | null = [];
  private rankCount = 0;
  private readonly freeRankIds: number[] = [];
  private nextRankId = 0;
  private depths = new Int32Array(16);

  constructor(options: TrackerOptions) {
    this.model = options.model;
    this.tenant = options.tenant;
    this.expiryMs = options.expiryMs ?? DEFAULT_REQUEST_EXPIRY_SECONDS * 1000;
    this.store = options.store ?? NULL_STORE;
    this.limits = {
      maxLiveRequests: MAX_LIVE_REQUESTS,
      maxWorkers: MAX_WORKERS,
      maxRanks: MAX_RANKS,
      ...options.limits,
    };
  }

  /** Whether the tracker exists (has at least one worker). */
  get exists(): boolean {
    return this.blockSizeValue !== undefined;
  }

  get blockSize(): number | undefined {
    return this.blockSizeValue;
  }

  get liveRequests(): number {
    return this.requests.size;
  }

  /** The earliest expiry deadline among live requests, epoch ms. */
  nextDeadline(): number | undefined {
    return this.expiry.head?.deadline;
  }

  register(input: RegisterInput, now: number): Result<{ created: boolean }> {
    this.expire(now);
    const { workerId, blockSize, dpStart, dpSize } = input;
    if (blockSize === 0) return fail("invalid_block_size", text.invalidBlockSize());
    if (dpSize === 0) return fail("invalid_dp_size", text.invalidDpSize());
    if (dpStart + dpSize > U32_MAX) return fail("invalid_dp_range", text.invalidDpRange(dpStart, dpSize));
    const created = this.blockSizeValue === undefined;
    if (!created && blockSize !== this.blockSizeValue) {
      return fail(
        "block_size_mismatch",
        text.blockSizeMismatch(this.model, this.tenant, this.blockSizeValue!, blockSize),
      );
    }
    if (this.workers.has(workerId)) {
      return fail("duplicate_worker", text.duplicateWorker(workerId, this.model, this.tenant));
    }
    if (this.workers.size >= this.limits.maxWorkers) {
      return fail(
        "limit_exceeded",
        `worker limit reached: at most ${this.limits.maxWorkers} workers per tracker`,
      );
    }
    if (this.rankCount + dpSize > this.limits.maxRanks) {
      return fail(
        "limit_exceeded",
        `rank limit reached: at most ${this.limits.maxRanks} data-parallel ranks per tracker (dp_size=${dpSize})`,
      );
    }
    this.blockSizeValue = blockSize;
    this.insertWorker(workerId, dpStart, dpSize);
    this.store.workerAdded(input);
    return { ok: true, created };
  }

  unregister(workerId: bigint, now: number): Result<{ deleted: boolean }> {
    this.expire(now);
    const worker = this.workers.get(workerId);
    if (!worker) return fail("worker_not_found", text.workerNotFound(workerId, this.model, this.tenant));
    if (this.workers.size === 1) {
      this.clear();
      this.store.trackerDeleted();
      return { ok: true, deleted: true };
    }
    // Dynamo drops the worker's requests silently: no free, no event (reference §2.1).
    for (const req of this.requests.values()) {
      if (req.slot.workerId === workerId) this.drop(req, now);
    }
    for (const slot of worker.slots) {
      this.freeRankIds.push(slot.id);
      this.rankCount--;
    }
    this.workers.delete(workerId);
    this.sorted = null;
    this.store.workerRemoved(workerId);
    return { ok: true, deleted: false };
  }

  add(input: AddInput, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const slot = this.slotOf(input.workerId, input.dpRank);
    if (!slot) return fail("rank_not_found", text.rankNotFound(input.workerId, input.dpRank));
    const existing = this.requests.get(input.requestId);
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
    if (this.requests.size >= this.limits.maxLiveRequests) {
      return fail(
        "limit_exceeded",
        `live request limit reached: at most ${this.limits.maxLiveRequests} live requests per tracker`,
      );
    }
    const req = this.insertRequest(input, now);
    this.store.requestAdded(req, input);
    return { ok: true };
  }

  prefillComplete(requestId: string, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const req = this.requests.get(requestId);
    if (!req) return fail("request_not_found", text.requestNotFound(requestId));
    if (req.inPrefill) {
      this.dequeuePrefill(req, now);
      this.store.prefillCompleted(req);
    }
    return { ok: true };
  }

  free(requestId: string, now: number): Result {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const req = this.requests.get(requestId);
    if (req) {
      this.drop(req, now);
      this.store.requestRemoved(req);
    }
    return { ok: true };
  }

  /**
   * Removes every request whose deadline has passed at `now`. Each is removed at its own deadline
   * (which is what a prefill re-anchor sees), so lazy and alarm-driven expiry give the same state.
   * @returns how many requests expired.
   */
  expire(now: number): number {
    let expired = 0;
    for (let req = this.expiry.head; req && req.deadline < now; req = this.expiry.head) {
      this.drop(req, req.deadline);
      this.store.requestRemoved(req);
      expired++;
    }
    return expired;
  }

  listWorkers(now: number): WorkerInfo[] {
    this.expire(now);
    const blockSize = this.blockSizeValue ?? 0;
    return this.sortedWorkers().map((w) => ({
      workerId: w.workerId,
      blockSize,
      dpStart: w.dpStart,
      dpSize: w.dpSize,
    }));
  }

  listLoads(now: number): RankLoad[] {
    this.expire(now);
    return this.sortedSlots().map((slot) => ({
      workerId: slot.workerId,
      dpRank: slot.dpRank,
      activePrefillTokens: slot.prefill.activeTokens(now),
      activeDecodeBlocks: this.trie.blocks(slot.id),
    }));
  }

  potentialLoads(
    hashes: BigUint64Array,
    newIslTokens: number,
    now: number,
  ): Result<{ loads: PotentialLoad[] }> {
    this.expire(now);
    if (!this.exists) return fail("tracker_not_found", text.trackerNotFound(this.model, this.tenant));
    const depths = this.depths;
    depths.fill(0);
    this.trie.overlapDepths(wordsOf(hashes), depths);
    const queryBlocks = hashes.length;
    const loads = this.sortedSlots().map((slot) => ({
      workerId: slot.workerId,
      dpRank: slot.dpRank,
      potentialPrefillTokens: slot.prefill.activeTokens(now) + newIslTokens,
      potentialDecodeBlocks: this.trie.blocks(slot.id) + queryBlocks - depths[slot.id]!,
      activeRequests: slot.requests,
    }));
    return { ok: true, loads };
  }

  /** The live request `requestId`, for callers that persist or replicate it. */
  request(requestId: string): LiveRequest | undefined {
    return this.requests.get(requestId);
  }

  /** The prompt hashes of a live request. */
  promptOf(req: LiveRequest): BigUint64Array {
    return this.trie.prompt(req.leaf);
  }

  /** Rebuilds a worker from storage, without reporting to the store. */
  restoreWorker(input: RegisterInput): void {
    this.blockSizeValue = input.blockSize;
    this.insertWorker(input.workerId, input.dpStart, input.dpSize);
  }

  /**
   * Rebuilds a live request from storage, without reporting to the store. Call in the original add
   * order so each rank's prefill FIFO comes back in the same order.
   * @param prefillDone whether its prefill had completed.
   * @param anchorAt when it became its rank's prefill anchor, if that was after its add.
   */
  restoreRequest(input: AddInput, startedAt: number, prefillDone: boolean, anchorAt?: number): void {
    const slot = this.slotOf(input.workerId, input.dpRank);
    if (!slot || this.requests.has(input.requestId)) return;
    const req = this.insertRequest(input, startedAt, prefillDone);
    if (anchorAt !== undefined && slot.prefill.head === req) slot.prefill.anchorAt = anchorAt;
  }

  private insertWorker(workerId: bigint, dpStart: number, dpSize: number): void {
    const slots: RankSlot[] = [];
    for (let i = 0; i < dpSize; i++) {
      const id = this.freeRankIds.pop() ?? this.nextRankId++;
      slots.push(new RankSlot(id, workerId, dpStart + i));
    }
    this.rankCount += dpSize;
    if (this.nextRankId > this.depths.length) {
      this.depths = new Int32Array(Math.max(this.nextRankId, this.depths.length * 2));
    }
    this.workers.set(workerId, { workerId, dpStart, dpSize, slots });
    this.sorted = null;
  }

  private insertRequest(input: AddInput, startedAt: number, prefillDone = false): LiveRequest {
    const slot = this.slotOf(input.workerId, input.dpRank)!;
    const leaf = this.trie.insert(wordsOf(input.hashes), slot.id);
    const req = new LiveRequest(
      input.requestId,
      slot,
      leaf,
      startedAt,
      startedAt + this.expiryMs,
      input.newIslTokens,
      input.expectedPrefillDurationMs ?? Number.NaN,
      input.expectedOutputTokens,
    );
    this.requests.set(req.id, req);
    this.expiry.insert(req);
    slot.requests++;
    // Dynamo queues a prefill only when it has tokens to compute (reference §1.3).
    if (!prefillDone && req.prefillTokens > 0) slot.prefill.push(req, startedAt);
    return req;
  }

  /** Takes a request out of every structure; `now` is when its prefill (if pending) ended. */
  private drop(req: LiveRequest, now: number): void {
    this.dequeuePrefill(req, now);
    this.trie.remove(req.leaf, req.slot.id);
    this.expiry.remove(req);
    this.requests.delete(req.id);
    req.slot.requests--;
  }

  private dequeuePrefill(req: LiveRequest, now: number): void {
    const anchor = req.slot.prefill.remove(req, now);
    // Only a decaying anchor's start time matters; persist it for a restart to pick up.
    if (anchor && !Number.isNaN(anchor.prefillDurationMs)) this.store.anchorMoved(anchor as LiveRequest, now);
  }

  private slotOf(workerId: bigint, dpRank: number): RankSlot | undefined {
    const worker = this.workers.get(workerId);
    if (!worker) return undefined;
    return worker.slots[dpRank - worker.dpStart];
  }

  private sortedWorkers(): WorkerEntry[] {
    return [...this.workers.values()].sort((a, b) => compareBigint(a.workerId, b.workerId));
  }

  private sortedSlots(): RankSlot[] {
    if (!this.sorted) this.sorted = this.sortedWorkers().flatMap((w) => w.slots);
    return this.sorted;
  }

  private clear(): void {
    this.workers.clear();
    this.requests.clear();
    this.trie.clear();
    this.expiry.clear();
    this.sorted = [];
    this.rankCount = 0;
    this.freeRankIds.length = 0;
    this.nextRankId = 0;
    this.blockSizeValue = undefined;
  }
}

/** The u64 hashes as little-endian u32 pairs, without copying. */
function wordsOf(hashes: BigUint64Array): Uint32Array {
  return new Uint32Array(hashes.buffer, hashes.byteOffset, hashes.length * 2);
}

function compareBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
