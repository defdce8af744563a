/**
 * The RPC contract between the Worker (caller) and the objects (callee): the methods, whose payloads
 * and results are in `types.ts` and `metrics-types.ts`. Kept above both, so neither imports the other.
 */
import type { KvGap } from "./core/kv-events/kv-intake";
import type { KvEventsAck, KvEventsInput, KvStreamInfo } from "./kv-event-types";
import type { RouterEvent } from "./core/cache-index/cache-index";
import type { CatalogRecord, WorkerPatch, WorkerUpsert } from "./core/catalog/catalog-record";
import type { LeaseInfo } from "./core/lease/lease-book";
import type { PeerStatus, TrackerMetrics } from "./metrics/metrics-types";
import type {
  OverlapScores,
  PromptQuery,
  ReservationInput,
  ReservationOutcome,
  SelectInput,
  SelectionLoad,
  SelectOutcome,
} from "./selection-types";
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
  // Frontend leases (SPEC §8); a tracker without workers holds them too (a lease may come first).
  /** `POST /leases`: creates or renews; `ttlMs` in `MIN_LEASE_TTL_MS..MAX_LEASE_TTL_MS`. */
  renewLease(owner: string, ttlMs: number): Promise<Result<{ owner: string; expiresAtMs: number }>>;
  /** `DELETE /leases/{owner}`: ends the lease at once, freeing its bookings; `lease_not_found` if not live. */
  endLease(owner: string): Promise<Result<{ freed: number }>>;
  /** `GET /leases`: live leases with their booking counts, by owner. */
  listLeases(): Promise<LeaseInfo[]>;
  /** Replication state towards each peer replica (empty with one replica). */
  replicaStatus(): Promise<PeerStatus[]>;
  route(input: RouteInput): Promise<Result<RouteOutcome>>;
  routingStats(): Promise<RoutingStats>;
  /** Everything `GET /metrics` reports of this tracker; counters count since the object started. */
  metrics(): Promise<TrackerMetrics>;

  // The selection API (`selection-types.ts`, reference selection §1), on the same live requests.
  /** `/select` (query or advisory; a `selectionId` leaves the choice pending) and `/select_and_reserve`. */
  select(input: SelectInput): Promise<Result<SelectOutcome>>;
  /** `/reservations`: a pending selection's replay, or an explicit (worker, rank). */
  reserve(input: ReservationInput): Promise<Result<ReservationOutcome>>;
  /** Whether `id` is a live booking of this tracker (finding the tracker of an id-only call). */
  hasReservation(id: string): Promise<boolean>;
  reservationPrefillComplete(id: string): Promise<Result>;
  /** One more output block on this replica only (not replicated, as in Dynamo); fraction in [0, 1]. */
  reservationOutputBlock(id: string, decayFraction?: number): Promise<Result>;
  endReservation(id: string): Promise<Result>;
  /** Each schedulable rank's load; null while the partition has no schedulable worker. */
  selectionLoads(): Promise<SelectionLoad[] | null>;
  selectionPotentialLoads(query: PromptQuery): Promise<Result<{ loads: SelectionLoad[] }>>;
  overlapScores(query: PromptQuery): Promise<Result<OverlapScores>>;
  /** `POST /kv_events`: one rank's engine KV-event batches (SPEC §9); a gap changes nothing. */
  kvEvents(input: KvEventsInput): Promise<Result<KvEventsAck> | KvGap>;
  /** `GET /kv_events`: the tracker's publishers, sorted by worker then rank. */
  kvStreams(): Promise<KvStreamInfo[]>;
  /** The cache index as Dynamo's `/dump` recovery events; null for a tracker without workers. */
  cacheDump(): Promise<{ blockSize: number; events: RouterEvent[] } | null>;
  /** `POST /selection/workers` in this partition: the record replaced whole, judged. */
  catalogUpsert(input: WorkerUpsert): Promise<Result<{ record: CatalogRecord }>>;
  /** `PATCH /selection/workers/{id}`: `worker_not_found` when this partition does not list it. */
  catalogPatch(workerId: bigint, patch: WorkerPatch): Promise<Result<{ record: CatalogRecord }>>;
  /** `DELETE /selection/workers/{id}`: answers the final (`unschedulable`) record. */
  catalogDelete(workerId: bigint): Promise<Result<{ record: CatalogRecord }>>;
  /** The partition's catalog: its records and its `/register`ed workers as records, unsorted. */
  catalogList(): Promise<CatalogRecord[]>;
}

/** The per-replica directory of trackers that have workers (used only by unfiltered listings). */
export interface DirectoryRpc {
  /** Records that (model, tenant) gained its first worker (`present`) or lost its last; newer `version` wins. */
  setTracker(model: string, tenant: string, present: boolean, version: number): Promise<void>;
  /** Trackers with workers, optionally of one model, sorted by (model, tenant) bytes. */
  listTrackers(model?: string): Promise<{ model: string; tenant: string }[]>;
  /** The worker ids a partition's catalog lists (its whole list); newer `version` wins. */
  setCatalog(model: string, tenant: string, workerIds: bigint[], version: number): Promise<void>;
  /** The partitions whose catalog lists `workerId`, sorted by (model, tenant) bytes. */
  workerPartitions(workerId: bigint): Promise<{ model: string; tenant: string }[]>;
  /** Partitions with a catalog worker or a slot-tracker worker, optionally of one model, sorted. */
  listPartitions(model?: string): Promise<{ model: string; tenant: string }[]>;
}
