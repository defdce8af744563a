import type { AddInput, PotentialLoad, RankLoad, RegisterInput, WorkerInfo } from "../types";
import { ExpiryList } from "./expiry-list";
import { LiveRequest } from "./live-request";
import { compareBigint } from "./order";
import { PromptTrie } from "./prompt-index/prompt-trie";
import { RankSlot, type WorkerEntry } from "./rank-slot";
import type { EventKey } from "./replica/clock";

/** Millionths of a block: the unit output blocks are counted in. */
const MICRO = 1_000_000;

/** What a request needs to be booked, whoever accepted it: the fields of an `/add`. */
export type Booking = AddInput;

/**
 * The live book of one tracker: registered workers and their rank slots, live requests, the prompt
 * trie, per-rank prefill queues and the expiry order. It applies changes without judging them
 * (admission rules live in `Tracker`, ordering rules in `replica-merge.ts`) and answers the loads.
 */
export class Book {
  readonly workers = new Map<bigint, WorkerEntry>();
  readonly requests = new Map<string, LiveRequest>();
  readonly expiry = new ExpiryList();
  /**
   * Owned bookings by deadline: their age guard is longer than the expiry age, so in one list an
   * unowned add would walk back past every owned booking younger than the guard.
   */
  readonly ownedExpiry = new ExpiryList();
  /** Live bookings by owner (SPEC §8); an owner with none has no entry. */
  readonly owned = new Map<string, Set<LiveRequest>>();
  private readonly trie = new PromptTrie();
  private blockSizeValue: number | undefined;
  private sorted: RankSlot[] | null = [];
  private rankCountValue = 0;
  private readonly freeRankIds: number[] = [];
  private nextRankId = 0;
  private depths = new Int32Array(16);
  private liveBlocksValue = 0;
  /**
   * A prompt copied here is read as u32 words through one lasting view: a view of each caller's own
   * array would be a typed array allocated per call, which costs V8 more than the copy.
   */
  private prompt = new BigUint64Array(64);
  private promptWords = new Uint32Array(this.prompt.buffer);
  /** The worker `slotOf` found last: an add looks its rank up twice (admission, then booking). */
  private lastWorker: WorkerEntry | undefined;

  /** The tracker's block size, fixed by its first worker; undefined while it has none. */
  get blockSize(): number | undefined {
    return this.blockSizeValue;
  }

  get rankCount(): number {
    return this.rankCountValue;
  }

  /** Prompt blocks over all live requests, counted once per request (a shared prefix counts again). */
  get liveBlocks(): number {
    return this.liveBlocksValue;
  }

  slotOf(workerId: bigint, dpRank: number): RankSlot | undefined {
    let worker = this.lastWorker;
    if (worker?.workerId !== workerId) {
      worker = this.workers.get(workerId);
      if (!worker) return undefined;
      this.lastWorker = worker;
    }
    return worker.slots[dpRank - worker.dpStart];
  }

  insertWorker(input: RegisterInput, key: EventKey): WorkerEntry {
    const { workerId, dpStart, dpSize } = input;
    const slots: RankSlot[] = [];
    for (let i = 0; i < dpSize; i++) {
      const id = this.freeRankIds.pop() ?? this.nextRankId++;
      slots.push(new RankSlot(id, workerId, dpStart + i));
    }
    this.rankCountValue += dpSize;
    if (this.nextRankId > this.depths.length) {
      this.depths = new Int32Array(Math.max(this.nextRankId, this.depths.length * 2));
    }
    const entry: WorkerEntry = { workerId, dpStart, dpSize, slots, input, key };
    this.workers.set(workerId, entry);
    this.blockSizeValue = input.blockSize;
    this.sorted = null;
    return entry;
  }

  /** Removes a worker and its live requests (returned, already out of the book); the last one empties the book. */
  removeWorker(entry: WorkerEntry, at: number): LiveRequest[] {
    const dropped: LiveRequest[] = [];
    for (const req of this.requests.values()) {
      if (req.slot.workerId === entry.workerId) {
        this.drop(req, at);
        dropped.push(req);
      }
    }
    for (const slot of entry.slots) this.freeRankIds.push(slot.id);
    this.rankCountValue -= entry.dpSize;
    this.workers.delete(entry.workerId);
    if (this.lastWorker === entry) this.lastWorker = undefined;
    this.sorted = null;
    if (this.workers.size === 0) this.clear();
    return dropped;
  }

  /**
   * Gives a worker new ranks in place (a catalog range change): ranks in both ranges keep their
   * slots, so their live requests, prompts and prefill queues stay as they are. The ranks left out
   * must have no live requests (the caller moved them out first).
   */
  reshapeWorker(entry: WorkerEntry, input: RegisterInput, key: EventKey): WorkerEntry {
    const { workerId, dpStart, dpSize } = input;
    const kept = (rank: number) => rank >= entry.dpStart && rank < entry.dpStart + entry.dpSize;
    for (const slot of entry.slots) {
      if (slot.dpRank < dpStart || slot.dpRank >= dpStart + dpSize) this.freeRankIds.push(slot.id);
    }
    const slots: RankSlot[] = [];
    for (let rank = dpStart; rank < dpStart + dpSize; rank++) {
      const id = kept(rank) ? undefined : (this.freeRankIds.pop() ?? this.nextRankId++);
      slots.push(id === undefined ? entry.slots[rank - entry.dpStart]! : new RankSlot(id, workerId, rank));
    }
    this.rankCountValue += dpSize - entry.dpSize;
    if (this.nextRankId > this.depths.length) {
      this.depths = new Int32Array(Math.max(this.nextRankId, this.depths.length * 2));
    }
    const next: WorkerEntry = { workerId, dpStart, dpSize, slots, input, key };
    this.workers.set(workerId, next);
    this.blockSizeValue = input.blockSize;
    if (this.lastWorker === entry) this.lastWorker = undefined;
    this.sorted = null;
    return next;
  }

  /**
   * Books a request on its slot (which must exist).
   * @param key the change that booked it; orders prefill queues and settles replica conflicts.
   * @param startedAt when it was booked, epoch ms; `deadline` when it expires.
   */
  insertRequest(booking: Booking, key: EventKey, startedAt: number, deadline: number, prefillDone = false) {
    const slot = this.slotOf(booking.workerId, booking.dpRank)!;
    const leaf = this.trie.insert(this.wordsOf(booking.hashes), slot.id, booking.hashes.length);
    const req = new LiveRequest(
      booking.requestId,
      slot,
      leaf,
      startedAt,
      deadline,
      booking.newIslTokens,
      booking.expectedPrefillDurationMs ?? Number.NaN,
      booking.expectedOutputTokens,
      key.ts,
      key.origin,
      booking.hashes.length,
    );
    if (booking.cachePrompt !== undefined) req.cachePrompt = booking.cachePrompt;
    if (booking.owner !== undefined && booking.grant) {
      req.lease = { owner: booking.owner, at: booking.grant.at, deadline: booking.grant.deadline };
      let mine = this.owned.get(booking.owner);
      if (!mine) {
        mine = new Set();
        this.owned.set(booking.owner, mine);
      }
      mine.add(req);
    }
    this.liveBlocksValue += req.blocks;
    this.requests.set(req.id, req);
    this.expiryOf(req).insert(req);
    slot.requests++;
    // Dynamo queues a prefill only when it has tokens to compute (reference §1.3).
    if (!prefillDone && req.prefillTokens > 0) slot.prefill.push(req, startedAt);
    return req;
  }

  /**
   * Takes a request out of every structure; `at` is when its prefill (if pending) ended.
   * @returns the request that became its rank's decaying prefill anchor at `at`, if any.
   */
  drop(req: LiveRequest, at: number): LiveRequest | null {
    const anchor = this.dequeuePrefill(req, at);
    this.trie.remove(req.leaf, req.slot.id);
    this.expiryOf(req).remove(req);
    if (req.owner !== null) {
      const mine = this.owned.get(req.owner);
      mine?.delete(req);
      if (mine?.size === 0) this.owned.delete(req.owner);
    }
    this.requests.delete(req.id);
    this.liveBlocksValue -= req.blocks;
    req.slot.requests--;
    req.slot.outputMicroBlocks -= req.outputMicroBlocks;
    return anchor;
  }

  /**
   * One output block of a live request (the selection API's `output_block`), weighing `fraction`
   * of a block (1 without `decay_fraction`). Kept in millionths so that adding and removing
   * fractions never drifts; a rank's active decode blocks count them rounded to whole blocks.
   * Dynamo keeps these on one replica only, and so does this tracker: they are neither replicated
   * nor stored, and a restart forgets them.
   */
  addOutputBlock(req: LiveRequest, fraction = 1): void {
    const micro = Math.round(fraction * MICRO);
    req.outputMicroBlocks += micro;
    req.slot.outputMicroBlocks += micro;
  }

  /** Ends a request's pending prefill at `at`; returns the new decaying anchor, if any. */
  dequeuePrefill(req: LiveRequest, at: number): LiveRequest | null {
    const anchor = req.slot.prefill.remove(req, at) as LiveRequest | null;
    // Only a decaying anchor's start time matters (it is persisted for a restart to pick up).
    return anchor && !Number.isNaN(anchor.prefillDurationMs) ? anchor : null;
  }

  /** The deadline-ordered list a request is in. */
  expiryOf(req: LiveRequest): ExpiryList {
    return req.owner === null ? this.expiry : this.ownedExpiry;
  }

  /** The live request due first over both expiry lists. */
  firstDue(): LiveRequest | null {
    const a = this.expiry.head;
    const b = this.ownedExpiry.head;
    if (!a) return b;
    if (!b) return a;
    return b.deadline < a.deadline ? b : a;
  }

  /** The prompt hashes of a live request. */
  promptOf(req: LiveRequest): BigUint64Array {
    return this.trie.prompt(req.leaf);
  }

  listWorkers(): WorkerInfo[] {
    const blockSize = this.blockSizeValue ?? 0;
    return this.sortedWorkers().map((w) => ({ ...w.input, blockSize }));
  }

  listLoads(now: number): RankLoad[] {
    return this.sortedSlots().map((slot) => ({
      workerId: slot.workerId,
      dpRank: slot.dpRank,
      activePrefillTokens: slot.prefill.activeTokens(now),
      activeDecodeBlocks: this.activeBlocks(slot),
    }));
  }

  /** Distinct prompt blocks of the rank's live requests, plus their output blocks. */
  activeBlocks(slot: RankSlot): number {
    return this.trie.blocks(slot.id) + Math.round(slot.outputMicroBlocks / MICRO);
  }

  /**
   * How many leading blocks of `hashes` each rank's live requests already hold, by slot id: the
   * blocks a booking there would share rather than add. The array is reused by the next call.
   */
  overlapDepths(hashes: BigUint64Array): Int32Array {
    const depths = this.depths;
    depths.fill(0);
    this.trie.overlapDepths(this.wordsOf(hashes), depths, hashes.length);
    return depths;
  }

  potentialLoads(hashes: BigUint64Array, newIslTokens: number, now: number): PotentialLoad[] {
    const depths = this.overlapDepths(hashes);
    const queryBlocks = hashes.length;
    return this.sortedSlots().map((slot) => ({
      workerId: slot.workerId,
      dpRank: slot.dpRank,
      potentialPrefillTokens: slot.prefill.activeTokens(now) + newIslTokens,
      potentialDecodeBlocks: this.activeBlocks(slot) + queryBlocks - depths[slot.id]!,
      activeRequests: slot.requests,
    }));
  }

  sortedWorkers(): WorkerEntry[] {
    return [...this.workers.values()].sort((a, b) => compareBigint(a.workerId, b.workerId));
  }

  sortedSlots(): RankSlot[] {
    if (!this.sorted) this.sorted = this.sortedWorkers().flatMap((w) => w.slots);
    return this.sorted;
  }

  /** `hashes` as little-endian u32 pairs, in a buffer that the next call reuses. */
  private wordsOf(hashes: BigUint64Array): Uint32Array {
    if (hashes.length > this.prompt.length) {
      this.prompt = new BigUint64Array(Math.max(hashes.length, 2 * this.prompt.length));
      this.promptWords = new Uint32Array(this.prompt.buffer);
    }
    this.prompt.set(hashes);
    return this.promptWords;
  }

  /** Empties the book (the tracker lost its last worker). */
  clear(): void {
    this.workers.clear();
    this.lastWorker = undefined;
    this.requests.clear();
    this.liveBlocksValue = 0;
    this.trie.clear();
    this.expiry.clear();
    this.ownedExpiry.clear();
    this.owned.clear();
    this.sorted = [];
    this.rankCountValue = 0;
    this.freeRankIds.length = 0;
    this.nextRankId = 0;
    this.blockSizeValue = undefined;
  }
}
