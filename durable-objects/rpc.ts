/**
 * The RPC contract between the Worker (caller) and the objects (callee): the methods, whose payloads
 * and results are in `types.ts` and `metrics-types.ts`. Kept above both, so neither imports the other.
 */
import type { PeerStatus, TrackerMetrics } from "./metrics/metrics-types";
import type {
  AddInput,
  BatchOp,
  BatchOpResult,
  PotentialLoad,
  RankLoad,
  RegisterInput,
  Result,
  RouteInput,
  RouteOutcome,
  RoutingStats,
  WorkerInfo,
} from "./types";

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
  /** `POST /batch`: lifecycle ops in order, in one call; fails only for more than `MAX_BATCH_OPS` ops. */
  batch(ops: BatchOp[]): Promise<Result<{ results: BatchOpResult[] }>>;
  listLoads(): Promise<RankLoad[]>;
  potentialLoads(hashes: BigUint64Array, newIslTokens: number): Promise<Result<{ loads: PotentialLoad[] }>>;
  /** Replication state towards each peer replica (empty with one replica). */
  replicaStatus(): Promise<PeerStatus[]>;
  route(input: RouteInput): Promise<Result<RouteOutcome>>;
  routingStats(): Promise<RoutingStats>;
  /** Everything `GET /metrics` reports of this tracker; counters count since the object started. */
  metrics(): Promise<TrackerMetrics>;
}

/** The per-replica directory of trackers that have workers (used only by unfiltered listings). */
export interface DirectoryRpc {
  /** Records that (model, tenant) gained its first worker (`present`) or lost its last; newer `version` wins. */
  setTracker(model: string, tenant: string, present: boolean, version: number): Promise<void>;
  /** Trackers with workers, optionally of one model, sorted by (model, tenant) bytes. */
  listTrackers(model?: string): Promise<{ model: string; tenant: string }[]>;
}
