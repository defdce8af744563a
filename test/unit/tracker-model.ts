import type { TrackerLimits } from "../../durable-objects/core/tracker";
import type {
  AddInput,
  ErrorCode,
  PotentialLoad,
  RankLoad,
  RegisterInput,
  WorkerInfo,
} from "../../durable-objects/types";

/**
 * A deliberately plain model of the tracker contract (reference §1–§4), written from the formulas
 * rather than from the optimised core: plain maps, every load recomputed by scanning every live
 * request. The property test runs it side by side with `Tracker`.
 */

export type ModelResult = { ok: true } | { ok: false; code: ErrorCode };

interface Request {
  input: AddInput;
  hashes: bigint[];
  /** Add order; the prefill FIFO of a rank is its pending requests in this order. */
  seq: number;
  startedAt: number;
  /** Whether the request still waits for its prefill (queued only with tokens > 0). */
  pending: boolean;
}

/** A request leaving its rank's prefill queue (complete, free, expiry, drop) at `at`. */
interface Departure {
  rank: string;
  seq: number;
  at: number;
}

const U32_MAX = 2 ** 32 - 1;
const MAX_HASHES = 65_536;
const fail = (code: ErrorCode): ModelResult => ({ ok: false, code });
const rankKey = (workerId: bigint, dpRank: number) => `${workerId}/${dpRank}`;

export class TrackerModel {
  private blockSize: number | undefined;
  private readonly workers = new Map<bigint, RegisterInput>();
  private readonly requests = new Map<string, Request>();
  private departures: Departure[] = [];
  private seq = 0;

  constructor(
    private readonly expiryMs: number,
    private readonly limits: TrackerLimits,
  ) {}

  get liveRequests(): number {
    return this.requests.size;
  }

  nextDeadline(): number | undefined {
    const deadlines = [...this.requests.values()].map((r) => r.startedAt + this.expiryMs);
    return deadlines.length ? Math.min(...deadlines) : undefined;
  }

  /** Registered ranks as (worker_id, dp_rank), sorted; reading them expires nothing. */
  ranks(): [bigint, number][] {
    return [...this.workers.values()]
      .sort((a, b) => (a.workerId < b.workerId ? -1 : 1))
      .flatMap((w) =>
        Array.from({ length: w.dpSize }, (_, i): [bigint, number] => [w.workerId, w.dpStart + i]),
      );
  }

  /** A request is expired once `now` is past start + age; it leaves its queue at that deadline. */
  expire(now: number): number {
    const due = [...this.requests.values()].filter((r) => r.startedAt + this.expiryMs < now);
    for (const r of due) this.remove(r, r.startedAt + this.expiryMs);
    return due.length;
  }

  register(input: RegisterInput, now: number): ModelResult {
    this.expire(now);
    if (input.blockSize === 0) return fail("invalid_block_size");
    if (input.dpSize === 0) return fail("invalid_dp_size");
    if (input.dpStart + input.dpSize > U32_MAX) return fail("invalid_dp_range");
    if (this.blockSize !== undefined && this.blockSize !== input.blockSize)
      return fail("block_size_mismatch");
    if (this.workers.has(input.workerId)) return fail("duplicate_worker");
    if (this.workers.size + 1 > this.limits.maxWorkers) return fail("limit_exceeded");
    const ranks = [...this.workers.values()].reduce((n, w) => n + w.dpSize, 0);
    if (ranks + input.dpSize > this.limits.maxRanks) return fail("limit_exceeded");
    this.blockSize = input.blockSize;
    this.workers.set(input.workerId, { ...input });
    return { ok: true };
  }

  unregister(workerId: bigint, now: number): ModelResult {
    this.expire(now);
    if (!this.workers.has(workerId)) return fail("worker_not_found");
    this.workers.delete(workerId);
    for (const r of this.requests.values())
      if (r.input.workerId === workerId) this.requests.delete(r.input.requestId);
    this.departures = this.departures.filter((d) => !d.rank.startsWith(`${workerId}/`));
    if (this.workers.size === 0) {
      this.blockSize = undefined;
      this.departures = [];
    }
    return { ok: true };
  }

  add(input: AddInput, now: number): ModelResult {
    this.expire(now);
    if (this.blockSize === undefined) return fail("tracker_not_found");
    const w = this.workers.get(input.workerId);
    if (!w || input.dpRank < w.dpStart || input.dpRank >= w.dpStart + w.dpSize) return fail("rank_not_found");
    if (this.requests.has(input.requestId)) return fail("duplicate_request");
    if (input.hashes.length > MAX_HASHES) return fail("too_large");
    if (this.requests.size >= this.limits.maxLiveRequests) return fail("limit_exceeded");
    let held = 0;
    for (const r of this.requests.values()) held += r.hashes.length;
    if (held + input.hashes.length > this.limits.maxLiveBlocks) return fail("limit_exceeded");
    this.requests.set(input.requestId, {
      input,
      hashes: [...input.hashes],
      seq: this.seq++,
      startedAt: now,
      pending: input.newIslTokens > 0,
    });
    return { ok: true };
  }

  prefillComplete(requestId: string, now: number): ModelResult {
    this.expire(now);
    if (this.blockSize === undefined) return fail("tracker_not_found");
    const r = this.requests.get(requestId);
    if (!r) return fail("request_not_found");
    this.leaveQueue(r, now);
    return { ok: true };
  }

  free(requestId: string, now: number): ModelResult {
    this.expire(now);
    if (this.blockSize === undefined) return fail("tracker_not_found");
    const r = this.requests.get(requestId);
    if (r) this.remove(r, now);
    return { ok: true };
  }

  listWorkers(now: number): WorkerInfo[] {
    this.expire(now);
    return [...this.workers.values()]
      .sort((a, b) => (a.workerId < b.workerId ? -1 : 1))
      .map((w) => ({ workerId: w.workerId, blockSize: w.blockSize, dpStart: w.dpStart, dpSize: w.dpSize }));
  }

  listLoads(now: number): RankLoad[] {
    this.expire(now);
    return this.ranks().map(([workerId, dpRank]) => ({
      workerId,
      dpRank,
      activePrefillTokens: this.prefill(workerId, dpRank, now),
      activeDecodeBlocks: new Set(this.on(workerId, dpRank).flatMap((r) => r.hashes)).size,
    }));
  }

  potentialLoads(
    query: BigUint64Array,
    newIslTokens: number,
    now: number,
  ): { ok: true; loads: PotentialLoad[] } | ModelResult {
    this.expire(now);
    if (this.blockSize === undefined) return fail("tracker_not_found");
    const q = [...query];
    const loads = this.ranks().map(([workerId, dpRank]) => {
      const live = this.on(workerId, dpRank);
      let overlap = 0;
      for (const r of live) {
        let i = 0;
        while (i < q.length && i < r.hashes.length && q[i] === r.hashes[i]) i++;
        overlap = Math.max(overlap, i);
      }
      return {
        workerId,
        dpRank,
        potentialPrefillTokens: this.prefill(workerId, dpRank, now) + newIslTokens,
        potentialDecodeBlocks: new Set(live.flatMap((r) => r.hashes)).size + q.length - overlap,
        activeRequests: live.length,
      };
    });
    return { ok: true, loads };
  }

  /**
   * Reference §1.3. The anchor is the oldest pending request; it anchored when it was added or when
   * the last request ahead of it left the queue, whichever was later.
   */
  private prefill(workerId: bigint, dpRank: number, now: number): number {
    const queue = this.on(workerId, dpRank).filter((r) => r.pending);
    const anchor = queue[0];
    if (!anchor) return 0;
    const key = rankKey(workerId, dpRank);
    const ahead = this.departures.filter((d) => d.rank === key && d.seq < anchor.seq).map((d) => d.at);
    const anchoredAt = Math.max(anchor.startedAt, ...ahead);
    const elapsed = Math.max(0, now - anchoredAt);
    const sum = queue.reduce((n, r) => n + r.input.newIslTokens, 0);
    const a = anchor.input.newIslTokens;
    const d = anchor.input.expectedPrefillDurationMs;
    if (queue.some((r) => r.input.expectedPrefillDurationMs === undefined)) {
      const rest =
        d === undefined ? a : d === 0 ? 0 : Math.ceil(a * Math.min(1, Math.max(0, 1 - elapsed / d)));
      return sum - a + rest;
    }
    const done = d === 0 ? a : Math.floor((a * elapsed) / d!);
    return Math.max(0, sum - done);
  }

  /** Live requests on a rank in add order. */
  private on(workerId: bigint, dpRank: number): Request[] {
    return [...this.requests.values()]
      .filter((r) => r.input.workerId === workerId && r.input.dpRank === dpRank)
      .sort((a, b) => a.seq - b.seq);
  }

  private leaveQueue(r: Request, at: number): void {
    if (!r.pending) return;
    r.pending = false;
    this.departures.push({ rank: rankKey(r.input.workerId, r.input.dpRank), seq: r.seq, at });
  }

  private remove(r: Request, at: number): void {
    this.leaveQueue(r, at);
    this.requests.delete(r.input.requestId);
  }
}
