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
  | "limit_exceeded"
  | "too_large"
  | "invalid_input";

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
}

export interface WorkerInfo {
  workerId: bigint;
  blockSize: number;
  dpStart: number;
  dpSize: number;
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

/**
 * The tracker object's RPC methods (implemented by `TrackerObject`). Every method first applies
 * expiry due at the call's time. Methods on a (model, tenant) without registered workers answer
 * `tracker_not_found` where Dynamo does, and empty lists for the listings.
 */
export interface TrackerRpc {
  register(input: RegisterInput): Promise<Result>;
  unregister(workerId: bigint): Promise<Result>;
  listWorkers(): Promise<WorkerInfo[]>;
  add(input: AddInput): Promise<Result>;
  prefillComplete(requestId: string): Promise<Result>;
  free(requestId: string): Promise<Result>;
  listLoads(): Promise<RankLoad[]>;
  potentialLoads(hashes: BigUint64Array, newIslTokens: number): Promise<Result<{ loads: PotentialLoad[] }>>;
}

/** The per-replica directory of trackers that have workers (used only by unfiltered listings). */
export interface DirectoryRpc {
  /** Records that (model, tenant) gained its first worker (`present`) or lost its last; newer `version` wins. */
  setTracker(model: string, tenant: string, present: boolean, version: number): Promise<void>;
  /** Trackers with workers, optionally of one model, sorted by (model, tenant) bytes. */
  listTrackers(model?: string): Promise<{ model: string; tenant: string }[]>;
}
