/**
 * `core/catalog/`: the selection service's worker catalog (reference selection §2, §7), pure. The
 * record and its inputs (this file), the texts (`catalog-messages.ts`), DP ranges (`dp-ranks.ts`),
 * what makes a record schedulable and how it reconciles with its partition (`schedulable.ts`),
 * building and patching a record (`build-record.ts`), the transitions of an upsert or a delete
 * (`lifecycle.ts`), listings and `/ready` (`catalog-listing.ts`), where the catalog meets the
 * slot-tracker API's `/register` (`slot-tracker-meeting.ts`). The catalog a tracker holds: its
 * entries (`catalog-state.ts`) and their rank floors (`rank-floors.ts`), the partition's fix as a
 * function of them (`partition-fix.ts`), the book they put workers in (`catalog-book.ts`) and the
 * writes a replica accepts (`catalog-writes.ts`); the merge rule is `core/replica/catalog-merge.ts`.
 *
 * One record per worker id, service-wide; it lives in the tracker of its partition (model, routing
 * group). Fields mirror Dynamo's `WorkerCatalogRecord` in its declaration order; an absent optional
 * field is `undefined` here and `null` on the wire (Dynamo keeps `None`, so a record posted without
 * `data_parallel_size` lists `null` there while it schedules with the default 1).
 */

/** `incomplete` and `schedulable` are settled states; `draining` and `unschedulable` are transitional. */
export type WorkerLifecycle = "incomplete" | "schedulable" | "draining" | "unschedulable";

/** Dynamo's `KvTransferEnforcement`: where the topology taint goes in the routing constraints. */
export type KvTransferEnforcement = "required" | "preferred";

/** Model name and routing group when a request names none (Dynamo's `default_model_name` and `default_routing_group`). */
export const DEFAULT_PARTITION_NAME = "default";

/** Everything a catalog request may set: `WorkerRequest`'s fields, without the defaults applied. */
export interface CatalogFields {
  /** Unique across the whole service, not per partition (u64). */
  readonly workerId: bigint;
  /** Model name, 1..256 UTF-8 bytes. */
  readonly model: string;
  /** Routing group (the slot-tracker API's tenant), 1..256 UTF-8 bytes. */
  readonly tenant: string;
  /** Where requests for this worker go; required (non-empty) to schedule. */
  readonly endpoint?: string;
  /** The worker's KV event publisher, used for every rank only when the worker has one rank. */
  readonly kvEventsEndpoint?: string;
  /** KV event publisher per DP rank (global rank → URL); wins over `kvEventsEndpoint` when non-empty. */
  readonly kvEventsEndpoints: ReadonlyMap<number, string>;
  /** Engine endpoint for gap replay of KV events. */
  readonly replayEndpoint?: string;
  /** Tokens per KV block (u32); required (≥ 1) to schedule, and equal across a partition. */
  readonly blockSize?: number;
  /** First global DP rank (u32); scheduling reads an absent one as 0. */
  readonly dpStart?: number;
  /** Number of DP ranks (u32); scheduling reads an absent one as 1. */
  readonly dpSize?: number;
  /** Tokens one engine step may batch (u64); required to schedule while queueing is on. */
  readonly maxNumBatchedTokens?: bigint;
  /** KV blocks the worker's cache holds (u64). */
  readonly totalKvBlocks?: bigint;
  readonly stableRoutingId?: string;
  /** Speculative decoding with EAGLE; absent reads as false, and must agree across a partition. */
  readonly isEagle?: boolean;
  /** Labels that routing constraints require or prefer; a set, kept in UTF-8 byte order. */
  readonly taints: readonly string[];
  /** Topology labels (domain → value), e.g. `zone` → `us-east-1a`. */
  readonly topologyDomains: ReadonlyMap<string, string>;
  readonly kvTransferDomain?: string;
  readonly kvTransferEnforcement?: KvTransferEnforcement;
  /** Weight of the generated taint when enforcement is `preferred` (an f32 value). */
  readonly kvTransferPreferredWeight?: number;
  /** Backend role for KV hints; present means the worker can consume router hints. */
  readonly routerHintWorkerType?: string;
  /** KV control endpoint per global DP rank that hint targets fetch from. */
  readonly routerHintSourceControlEndpoints: ReadonlyMap<number, string>;
  /** How the worker publishes KV events (e.g. `state_agent_v2`). */
  readonly kvEventSourceMode?: string;
  /**
   * Ours, not Dynamo's: which life of the worker this is (u64, absent reads as 0). A POST with a
   * higher one than the record's keeps none of its bookings (`catalog-writes.ts`); a PATCH keeps it.
   */
  readonly incarnation?: bigint;
}

export interface CatalogRecord extends CatalogFields {
  readonly lifecycle: WorkerLifecycle;
  /** Why the record is `incomplete`, in Dynamo's order and wording; empty otherwise. */
  readonly notSchedulableReasons: readonly string[];
}

/** `POST /workers`: a full replace. Omitted partition names read as "default", omitted collections as empty. */
export type WorkerUpsert = Omit<
  CatalogFields,
  "model" | "tenant" | "kvEventsEndpoints" | "taints" | "topologyDomains" | "routerHintSourceControlEndpoints"
> &
  Partial<
    Pick<
      CatalogFields,
      | "model"
      | "tenant"
      | "kvEventsEndpoints"
      | "taints"
      | "topologyDomains"
      | "routerHintSourceControlEndpoints"
    >
  >;

/**
 * `PATCH /workers/{id}`: a field that is present replaces the record's, a collection whole; absent
 * (JSON `null` included) keeps it, so a patch cannot clear a field. The partition is not patchable.
 */
export type WorkerPatch = Partial<Omit<CatalogFields, "workerId" | "model" | "tenant" | "incarnation">>;

/** What the first reconciled worker fixed for its partition; every later worker must match it. */
export interface PartitionFix {
  /** Tokens per KV block (u32, ≥ 1). */
  readonly blockSize: number;
  readonly isEagle: boolean;
}

/** The router settings that add requirements to a schedulable record. */
export interface CatalogConfig {
  /**
   * Dynamo's queueing (`router_queue_threshold` set, or a queueing policy class for the model): then
   * a worker needs `max_num_batched_tokens` (reason 4).
   */
  readonly queueingEnabled: boolean;
  /**
   * Dynamo's `use_kv_events`: the index is fed by each rank's KV event publisher, so every rank
   * needs an endpoint (reason 5) and replay needs a single rank.
   */
  readonly kvEventsEnabled: boolean;
}

/**
 * What this service runs with: no queue (SPEC §7 offers none, so reason 4 never fires) and the
 * approximate index, fed by bookings rather than engine events (so reason 5 never fires). Each is a
 * switch, not removed code: engine KV events are the next step.
 */
export const CATALOG_CONFIG: CatalogConfig = { queueingEnabled: false, kvEventsEnabled: false };
