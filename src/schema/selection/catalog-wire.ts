/**
 * A catalog record as Dynamo's `WorkerCatalogRecord` serialises (reference selection §1.3): fields in
 * the Rust declaration order, an absent `Option` as `null`, and five fields left out when empty or
 * none (`kv_events_endpoints`, `router_hint_worker_type`, `router_hint_source_control_endpoints`,
 * `kv_event_source_mode`, `not_schedulable_reasons`). Rust's hash maps and sets have no order; ours
 * are written in a stable one (ranks ascending, names by UTF-8 bytes), so equal records are equal text.
 * The result is a plain object for `send` (`src/wire/respond.ts`), which writes u64 values exactly.
 */
import type { Readiness } from "../../../durable-objects/core/catalog/catalog-listing";
import type {
  CatalogRecord,
  KvTransferEnforcement,
  WorkerLifecycle,
} from "../../../durable-objects/core/catalog/catalog-record";
import { compareUtf8 } from "../../../durable-objects/core/order";

/** Keys are ranks or labels; a type alias (not an interface), so it is a `JsonOutput`. */
type WireMap = { readonly [key: string]: string };

export type WireCatalogRecord = {
  readonly worker_id: bigint;
  readonly model_name: string;
  readonly routing_group: string;
  readonly lifecycle: WorkerLifecycle;
  readonly endpoint: string | null;
  readonly kv_events_endpoint: string | null;
  readonly kv_events_endpoints?: WireMap;
  readonly replay_endpoint: string | null;
  readonly block_size: number | null;
  readonly data_parallel_start_rank: number | null;
  readonly data_parallel_size: number | null;
  readonly max_num_batched_tokens: bigint | null;
  readonly total_kv_blocks: bigint | null;
  readonly stable_routing_id: string | null;
  readonly is_eagle: boolean | null;
  readonly taints: readonly string[];
  readonly topology_domains: WireMap;
  readonly kv_transfer_domain: string | null;
  readonly kv_transfer_enforcement: KvTransferEnforcement | null;
  readonly kv_transfer_preferred_weight: number | null;
  readonly router_hint_worker_type?: string;
  readonly router_hint_source_control_endpoints?: WireMap;
  readonly kv_event_source_mode?: string;
  readonly not_schedulable_reasons?: readonly string[];
  /** Ours: last, and only when the record has one, so Dynamo's clients read Dynamo's bytes. */
  readonly incarnation?: bigint;
};

function rankMap(map: ReadonlyMap<number, string>): WireMap {
  // Integer-like keys enumerate in ascending order whatever the insertion order.
  const wire: Record<string, string> = {};
  for (const [rank, url] of map) wire[String(rank)] = url;
  return wire;
}

function labelMap(map: ReadonlyMap<string, string>): WireMap {
  // No prototype: a `__proto__` label is an ordinary field, not the object's prototype.
  const wire: Record<string, string> = Object.create(null);
  for (const key of [...map.keys()].sort(compareUtf8)) wire[key] = map.get(key) as string;
  return wire;
}

export function catalogRecordToWire(record: CatalogRecord): WireCatalogRecord {
  // Assigned in order, and the left-out fields never assigned: the object's keys are the JSON's.
  const wire: { -readonly [K in keyof WireCatalogRecord]: WireCatalogRecord[K] } = {
    worker_id: record.workerId,
    model_name: record.model,
    routing_group: record.tenant,
    lifecycle: record.lifecycle,
    endpoint: record.endpoint ?? null,
    kv_events_endpoint: record.kvEventsEndpoint ?? null,
  } as WireCatalogRecord;
  if (record.kvEventsEndpoints.size > 0) wire.kv_events_endpoints = rankMap(record.kvEventsEndpoints);
  wire.replay_endpoint = record.replayEndpoint ?? null;
  wire.block_size = record.blockSize ?? null;
  wire.data_parallel_start_rank = record.dpStart ?? null;
  wire.data_parallel_size = record.dpSize ?? null;
  wire.max_num_batched_tokens = record.maxNumBatchedTokens ?? null;
  wire.total_kv_blocks = record.totalKvBlocks ?? null;
  wire.stable_routing_id = record.stableRoutingId ?? null;
  wire.is_eagle = record.isEagle ?? null;
  wire.taints = [...record.taints].sort(compareUtf8);
  wire.topology_domains = labelMap(record.topologyDomains);
  wire.kv_transfer_domain = record.kvTransferDomain ?? null;
  wire.kv_transfer_enforcement = record.kvTransferEnforcement ?? null;
  wire.kv_transfer_preferred_weight = record.kvTransferPreferredWeight ?? null;
  if (record.routerHintWorkerType !== undefined) wire.router_hint_worker_type = record.routerHintWorkerType;
  if (record.routerHintSourceControlEndpoints.size > 0) {
    wire.router_hint_source_control_endpoints = rankMap(record.routerHintSourceControlEndpoints);
  }
  if (record.kvEventSourceMode !== undefined) wire.kv_event_source_mode = record.kvEventSourceMode;
  if (record.notSchedulableReasons.length > 0) wire.not_schedulable_reasons = record.notSchedulableReasons;
  if (record.incarnation !== undefined) wire.incarnation = record.incarnation;
  return wire;
}

export type WireReadiness = {
  readonly ready: boolean;
  readonly schedulable_workers: number;
  readonly workers: readonly WireCatalogRecord[];
};

/** `GET /ready`'s body; it answers 200 when `ready`, else 503 with the same body. */
export function readinessToWire(readiness: Readiness): WireReadiness {
  return {
    ready: readiness.ready,
    schedulable_workers: readiness.schedulableWorkers,
    workers: readiness.workers.map(catalogRecordToWire),
  };
}

export function readinessStatus(readiness: Readiness): 200 | 503 {
  return readiness.ready ? 200 : 503;
}
