/**
 * The worker catalog's requests (reference selection §1.1, §7): `POST /workers` (Dynamo's
 * `WorkerRequest`), `PATCH /workers/{worker_id}` (`WorkerPatchRequest`), the path's id and
 * `GET /workers`' filters, with what each becomes in the core's vocabulary. Fields are Dynamo's, in
 * its order; unknown ones (`tenant_id` among them, which the selection service ignores) are ignored.
 */
import type {
  KvTransferEnforcement,
  WorkerPatch,
  WorkerUpsert,
} from "../../../durable-objects/core/catalog/catalog-record";
import { DEFAULT_PARTITION_NAME } from "../../../durable-objects/core/catalog/catalog-record";
import { MAX_CATALOG_TEXT_BYTES, MAX_NAME_BYTES } from "../../../durable-objects/limits";
import { HttpError } from "../../http/errors";
import { describe, type Infer, optional } from "../schema";
import { object } from "../schema-composites";
import { decimalU64, string } from "../schema-scalars";
import {
  axumJsonBody,
  serdeBool,
  serdeDefault,
  serdeEnum,
  serdeF32,
  serdeRankMap,
  serdeString,
  serdeStringMap,
  serdeStringSet,
  serdeStruct,
  serdeU32,
  serdeU64,
} from "./serde-schemas";

const name = serdeString({ minBytes: 1, maxBytes: MAX_NAME_BYTES });
const text = serdeString({ minBytes: 0, maxBytes: MAX_CATALOG_TEXT_BYTES });
const ENFORCEMENTS: readonly KvTransferEnforcement[] = ["required", "preferred"];

/** The fields POST and PATCH share, each optional; POST gives the collections defaults instead. */
const scalars = {
  endpoint: optional(describe(text, "Where requests for the worker go; required (non-empty) to schedule.")),
  kv_events_endpoint: optional(describe(text, "KV event publisher, for a worker of one DP rank.")),
};
const rankMap = (description: string) => describe(serdeRankMap(text), description);
const KV_EVENTS_ENDPOINTS = "KV event publisher per global DP rank; wins over `kv_events_endpoint`.";
const HINT_ENDPOINTS = "KV control endpoint per global DP rank that router-hint targets fetch from.";
const placement = {
  replay_endpoint: optional(describe(text, "Engine endpoint for KV event gap replay.")),
  block_size: optional(
    describe(serdeU32(), "Tokens per KV block; ≥ 1 to schedule, equal across the partition."),
  ),
  data_parallel_start_rank: optional(
    describe(serdeU32(), "First global DP rank; scheduled as 0 when absent."),
  ),
  data_parallel_size: optional(
    describe(serdeU32(), "DP ranks; scheduled as 1 when absent, ≥ 1 to schedule."),
  ),
  max_num_batched_tokens: optional(describe(serdeU64(), "Tokens one engine step may batch.")),
  total_kv_blocks: optional(describe(serdeU64(), "KV blocks the worker's cache holds.")),
  stable_routing_id: optional(text),
  is_eagle: optional(
    describe(serdeBool(), "EAGLE speculative decoding; false when absent, equal across the partition."),
  ),
};
const transfer = {
  kv_transfer_domain: optional(text),
  kv_transfer_enforcement: optional(serdeEnum(ENFORCEMENTS)),
  kv_transfer_preferred_weight: optional(
    describe(serdeF32(), "Weight of the topology taint when `preferred` (f32)."),
  ),
};
const taints = describe(serdeStringSet(text), "Labels routing constraints require or prefer (a set).");
const domains = describe(serdeStringMap(text, text), "Topology labels, domain → value.");
const hintType = optional(
  describe(text, "Backend role for router hints; present: the worker consumes them."),
);
const sourceMode = optional(describe(text, "How the worker publishes KV events."));
const INCARNATION =
  "Ours, not Dynamo's: which life of the worker this is (u64; absent reads as 0). A higher one than the record's keeps none of the worker's bookings; an equal, lower or absent one keeps those on the ranks the old and new ranges share.";

/** Shared defaults, frozen: every body that leaves a collection out gets the same empty one. */
const EMPTY_MAP: Readonly<Record<string, string>> = Object.freeze(Object.create(null));
const NO_TAINTS: readonly string[] = Object.freeze([]);

/** `POST /workers`: a full replace; `worker_id` is required (422 without it). */
export const workerRequestBody = axumJsonBody(
  serdeStruct("WorkerRequest", {
    worker_id: describe(serdeU64(), "Unique across the whole service; a new partition moves the worker."),
    model_name: serdeDefault(name, DEFAULT_PARTITION_NAME),
    routing_group: serdeDefault(name, DEFAULT_PARTITION_NAME),
    ...scalars,
    kv_events_endpoints: serdeDefault(rankMap(KV_EVENTS_ENDPOINTS), EMPTY_MAP),
    ...placement,
    taints: serdeDefault(taints, NO_TAINTS),
    topology_domains: serdeDefault(domains, EMPTY_MAP),
    ...transfer,
    router_hint_worker_type: hintType,
    router_hint_source_control_endpoints: serdeDefault(rankMap(HINT_ENDPOINTS), EMPTY_MAP),
    kv_event_source_mode: sourceMode,
    incarnation: optional(describe(serdeU64(), INCARNATION)),
  }),
);

/** `PATCH /workers/{worker_id}`: present fields replace, collections whole; `null` is absent. */
export const workerPatchBody = axumJsonBody(
  serdeStruct("WorkerPatchRequest", {
    ...scalars,
    kv_events_endpoints: optional(rankMap(KV_EVENTS_ENDPOINTS)),
    ...placement,
    taints: optional(taints),
    topology_domains: optional(domains),
    ...transfer,
    router_hint_worker_type: hintType,
    router_hint_source_control_endpoints: optional(rankMap(HINT_ENDPOINTS)),
    kv_event_source_mode: sourceMode,
  }),
);

/** `GET /workers`: each filter optional; an empty one matches no record, as in Dynamo. */
export const workerListQuery = object({
  model_name: optional(string({ minBytes: 0, maxBytes: MAX_NAME_BYTES })),
  routing_group: optional(string({ minBytes: 0, maxBytes: MAX_NAME_BYTES })),
});

/**
 * The `{worker_id}` path segment, read as Rust's `u64::from_str` reads it (decimal digits after an
 * optional `+`, leading zeros allowed); otherwise 400 with axum's `Path` rejection text.
 */
export function workerIdParam(raw: string): bigint {
  const id = decimalU64(raw);
  if (id === undefined) throw new HttpError(400, `Invalid URL: Cannot parse \`${raw}\` to a \`u64\``);
  return id;
}

function rankMapOf(wire: Readonly<Record<string, string>>): Map<number, string> {
  return new Map(Object.entries(wire).map(([rank, url]) => [Number(rank), url]));
}

function domainsOf(wire: Readonly<Record<string, string>>): Map<string, string> {
  return new Map(Object.entries(wire));
}

export function workerUpsertOf(body: Infer<typeof workerRequestBody>): WorkerUpsert {
  return {
    ...scalarsOf(body),
    workerId: body.worker_id,
    model: body.model_name,
    tenant: body.routing_group,
    kvEventsEndpoints: rankMapOf(body.kv_events_endpoints),
    taints: body.taints,
    topologyDomains: domainsOf(body.topology_domains),
    routerHintSourceControlEndpoints: rankMapOf(body.router_hint_source_control_endpoints),
    incarnation: body.incarnation,
  };
}

/** An absent field stays undefined, which the core reads as "keep the record's". */
export function workerPatchOf(body: Infer<typeof workerPatchBody>): WorkerPatch {
  return {
    ...scalarsOf(body),
    kvEventsEndpoints: body.kv_events_endpoints && rankMapOf(body.kv_events_endpoints),
    taints: body.taints,
    topologyDomains: body.topology_domains && domainsOf(body.topology_domains),
    routerHintSourceControlEndpoints:
      body.router_hint_source_control_endpoints && rankMapOf(body.router_hint_source_control_endpoints),
  };
}

type ScalarBody = Omit<
  Infer<typeof workerPatchBody>,
  "kv_events_endpoints" | "taints" | "topology_domains" | "router_hint_source_control_endpoints"
>;

function scalarsOf(body: ScalarBody) {
  return {
    endpoint: body.endpoint,
    kvEventsEndpoint: body.kv_events_endpoint,
    replayEndpoint: body.replay_endpoint,
    blockSize: body.block_size,
    dpStart: body.data_parallel_start_rank,
    dpSize: body.data_parallel_size,
    maxNumBatchedTokens: body.max_num_batched_tokens,
    totalKvBlocks: body.total_kv_blocks,
    stableRoutingId: body.stable_routing_id,
    isEagle: body.is_eagle,
    kvTransferDomain: body.kv_transfer_domain,
    kvTransferEnforcement: body.kv_transfer_enforcement,
    kvTransferPreferredWeight: body.kv_transfer_preferred_weight,
    routerHintWorkerType: body.router_hint_worker_type,
    kvEventSourceMode: body.kv_event_source_mode,
  };
}
