/**
 * Payloads and results of the tracker object's RPC surface, shared by the Worker (caller) and the
 * object (callee). 64-bit identifiers travel as `bigint`, prompt hashes as one `BigUint64Array`
 * (structured clone carries both exactly; a typed array costs one copy instead of one object per hash).
 * Keep every change backward- and forward-compatible: during a deploy, new Worker code may call
 * objects that still run the old version for a while.
 */

/** Identifies one tracker object: a (model, tenant) pair in one replica. */
export interface TrackerKey {
  /** Model name, 1..256 UTF-8 bytes. */
  model: string;
  /** Tenant (routing group), 1..256 UTF-8 bytes; `"default"` when the client gives none. */
  tenant: string;
  /** Replica name from the `REPLICAS` variable. */
  replica: string;
}

/** Every failure the tracker can report; the Worker maps each to one HTTP status in one table. */
export type ErrorCode =
  | "invalid_block_size"
  | "invalid_dp_size"
  | "invalid_dp_range"
  | "block_size_mismatch"
  | "duplicate_worker"
  | "worker_not_found"
  | "tracker_not_found"
  | "rank_not_found"
  | "duplicate_request"
  | "request_not_found"
  | "lease_not_found"
  | "limit_exceeded"
  | "too_large"
  | "invalid_input"
  | "no_worker"
  | "sequence_gap";

export interface Failure {
  ok: false;
  code: ErrorCode;
  /** The exact client-facing text (Dynamo's wording where Dynamo has one). */
  message: string;
}

export type Result<T extends object = object> = ({ ok: true } & T) | Failure;

export interface RegisterInput {
  workerId: bigint;
  /** Tokens per KV block; fixed for the tracker by its first worker. */
  blockSize: number;
  /** First data-parallel rank of the worker (u32). */
  dpStart: number;
  /** Number of data-parallel ranks (u32, ≥ 1); ranks are dpStart ..< dpStart + dpSize. */
  dpSize: number;
  /** Which hop of `/route` the worker serves; absent means decode (absent also in `/workers`). */
  workerType?: WorkerType;
  /** The worker's routing advertisement, if it made one (see `core/routing/advertisement.ts`). */
  routerConfig?: RouterCard;
  /**
   * Which life of the worker this is (u64): a higher one than the registered one's replaces it and
   * drops its bookings (`core/incarnation.ts`). Absent reads as 0 and stays absent in listings.
   */
  incarnation?: bigint;
}

/** Decode workers take `/route`'s booking; prefill workers are chosen for the prefill hop only. */
export type WorkerType = "decode" | "prefill";

/** How `/route` chooses among a worker set: Dynamo's KV cost, round robin over ranks, or uniform random. */
export type RouterMode = "kv" | "round_robin" | "random";

/** A worker's `router_config` card. Unset tuning means Dynamo's default, never the tracker's. */
export interface RouterCard {
  routerMode: RouterMode;
  /** Weight of prefill blocks in the KV cost (≥ 0; default 1.0). */
  overlapScoreWeight?: number;
  /** Softmax temperature of the KV choice (≥ 0; default 0: take the minimum). */
  routerTemperature?: number;
  /** Session affinity lifetime, seconds since the session's last routed request; unset: no affinity. */
  sessionAffinityTtlSecs?: number;
}

export interface AddInput {
  requestId: string;
  workerId: bigint;
  dpRank: number;
  /** The prompt's block hashes in order, as u64 (a signed i64 `-1` arrives here as 2^64 − 1). */
  hashes: BigUint64Array;
  /** Prompt tokens this worker still has to prefill; counted until prefill completes. */
  newIslTokens: number;
  /** Stored and replicated; feeds no load figure (as in Dynamo). */
  expectedOutputTokens?: number;
  /** When given, the request's prefill load decays over this many milliseconds (Dynamo's anchor rule). */
  expectedPrefillDurationMs?: number;
  /**
   * What the cache index records of this booking on its rank (reference selection §5). Absent:
   * `hashes`, as a prompt known only by its sequence hashes (slot-tracker bookings). `null`: nothing,
   * as Dynamo records no reservation made from sequence hashes alone.
   */
  cachePrompt?: CachePrompt | null;
  /**
   * The frontend whose lease owns this booking (SPEC §8), with the lease grant it was made under
   * (set by the tracker that accepted it: `core/lease/lease-table.ts`).
   */
  owner?: string;
  grant?: { at: number; deadline: number };
}

/** A selection booking's prompt as the cache index keeps it (reference selection §3.5). */
export interface CachePrompt {
  /** The public local block hashes (u64), one per complete block. */
  blockHashes: BigUint64Array;
  /**
   * Their public sequence hashes (u64), given only when the booking's `hashes` are not them (keyed
   * tracking, or random ones without KV reuse); absent, `hashes` are.
   */
  sequenceHashes?: BigUint64Array;
}

export interface WorkerInfo {
  workerId: bigint;
  blockSize: number;
  dpStart: number;
  dpSize: number;
  /** Only when given at registration. */
  workerType?: WorkerType;
  /** Only when given at registration. */
  routerConfig?: RouterCard;
  /** Only when given at registration. */
  incarnation?: bigint;
}

export interface RankLoad {
  workerId: bigint;
  dpRank: number;
  /** Prompt tokens still waiting for prefill on this rank (after decay, if any). */
  activePrefillTokens: number;
  /** Distinct KV blocks held by the rank's live requests. */
  activeDecodeBlocks: number;
}

export interface PotentialLoad {
  workerId: bigint;
  dpRank: number;
  /** activePrefillTokens + the query's new tokens. */
  potentialPrefillTokens: number;
  /** activeDecodeBlocks + query blocks beyond the rank's longest cached prefix. */
  potentialDecodeBlocks: number;
  /** Live requests on the rank. */
  activeRequests: number;
}

/** One lifecycle operation of `POST /batch`. */
export type BatchOp =
  | ({ op: "add" } & AddInput)
  | { op: "prefill_complete"; requestId: string }
  | { op: "free"; requestId: string };

/** Outcome of one batch op: the HTTP status the single-op route would have answered. */
export interface BatchOpResult {
  status: 200 | 201 | 400 | 404 | 409 | 413 | 429;
  error?: string;
}

/** `POST /route`: choose a worker for a new request and book it there as `/add` would. */
export interface RouteInput {
  requestId: string;
  /** The prompt's block hashes in order, as u64. */
  hashes: BigUint64Array;
  /** Prompt tokens still to prefill; booked like `/add`'s and counted in the KV cost. */
  newIslTokens: number;
  expectedOutputTokens?: number;
  /** Requests of one session stick to one worker while a session affinity TTL is in effect. */
  sessionId?: string;
  /** Per-request KV tuning (`router_config_override`), over the resolved one, on both hops. */
  overlapScoreWeight?: number;
  routerTemperature?: number;
  /** Seeds this call's random draws; the Worker passes it only when `ALLOW_TEST_SEED` is "1". */
  seed?: number;
  /** The frontend whose lease owns the booking (both hops'), as `AddInput.owner`. */
  owner?: string;
}

/** Dynamo's KV cost of the chosen rank (reference §7), whatever the mode that chose it. */
export interface RouteCost {
  /** overlap_score_weight × potentialPrefillTokens / block_size (+ potentialDecodeBlocks on the decode hop). */
  logit: number;
  potentialPrefillTokens: number;
  potentialDecodeBlocks: number;
  /** Leading prompt blocks the rank already holds. */
  overlapBlocks: number;
  /**
   * Leading prompt blocks the cache index credits the rank with (what bookings recorded there within
   * `DYN_ROUTER_TTL_SECS`, freed or not); `potentialPrefillTokens` is reduced by them × block size, up
   * to the prompt's tokens.
   */
  cachedBlocks: number;
}

export interface RouteChoice {
  workerId: bigint;
  dpRank: number;
  /** The id this choice is booked under. */
  requestId: string;
  mode: RouterMode;
  cost: RouteCost;
}

export interface RouteOutcome {
  decode: RouteChoice;
  /** Present when the tracker has prefill workers; booked under `<request_id>#prefill`. */
  prefill?: RouteChoice;
  /** Conflicting advertisements that were resolved by taking the first card. */
  warnings: string[];
}

/** How one worker set is routed right now, and how often its advertisements conflicted (for metrics). */
export interface HopStats {
  mode: RouterMode;
  /** Workers in the set that advertise a card. */
  cards: number;
  /** Cards that differ from the first, which decides. */
  disagreeingCards: number;
  /** `/route` calls of this object that resolved the set while its cards disagreed. */
  conflictedRoutes: number;
}

export interface RoutingStats {
  decode: HopStats;
  prefill: HopStats;
  /** Live session affinity bindings. */
  sessionBindings: number;
}
