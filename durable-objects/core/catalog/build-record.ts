/**
 * Building a record: `POST /workers` replaces the record whole from its request (`buildRecord`),
 * `PATCH /workers/{id}` merges into the current one (`patchRecord`). Either way the result is then
 * judged afresh, as Dynamo's `prepare_worker` does: reasons 1–5, then reconciliation with the
 * partition, then the lifecycle. An `incomplete` result is still a success (Dynamo answers 201).
 */
import { MAX_CATALOG_RECORD_BYTES } from "../../limits";
import type { Failure } from "../../types";
import { fail } from "../messages";
import { catalogText } from "./catalog-messages";
import type {
  CatalogConfig,
  CatalogFields,
  CatalogRecord,
  PartitionFix,
  WorkerPatch,
  WorkerUpsert,
} from "./catalog-record";
import { DEFAULT_PARTITION_NAME } from "./catalog-record";
import { notSchedulableReasons, reconcile } from "./schedulable";
import { compareUtf8, utf8Bytes } from "../order";

export interface BuildContext {
  readonly config: CatalogConfig;
  /** The partition's fix before this write; undefined while no worker has fixed it. */
  readonly fix: PartitionFix | undefined;
}

/**
 * The judged record, and the partition's fix after it: the record's own when it was the first to
 * reconcile. A record over {@link MAX_CATALOG_RECORD_BYTES} fails with `too_large` (413).
 */
export type Built = { ok: true; record: CatalogRecord; fix: PartitionFix | undefined } | Failure;

const NO_RANK_MAP: ReadonlyMap<number, string> = new Map();
const NO_DOMAINS: ReadonlyMap<string, string> = new Map();

export function buildRecord(input: WorkerUpsert, context: BuildContext): Built {
  return judge(
    {
      workerId: input.workerId,
      model: input.model ?? DEFAULT_PARTITION_NAME,
      tenant: input.tenant ?? DEFAULT_PARTITION_NAME,
      endpoint: input.endpoint,
      kvEventsEndpoint: input.kvEventsEndpoint,
      kvEventsEndpoints: input.kvEventsEndpoints ?? NO_RANK_MAP,
      replayEndpoint: input.replayEndpoint,
      blockSize: input.blockSize,
      dpStart: input.dpStart,
      dpSize: input.dpSize,
      maxNumBatchedTokens: input.maxNumBatchedTokens,
      totalKvBlocks: input.totalKvBlocks,
      stableRoutingId: input.stableRoutingId,
      isEagle: input.isEagle,
      taints: taintSet(input.taints ?? []),
      topologyDomains: input.topologyDomains ?? NO_DOMAINS,
      kvTransferDomain: input.kvTransferDomain,
      kvTransferEnforcement: input.kvTransferEnforcement,
      kvTransferPreferredWeight: input.kvTransferPreferredWeight,
      routerHintWorkerType: input.routerHintWorkerType,
      routerHintSourceControlEndpoints: input.routerHintSourceControlEndpoints ?? NO_RANK_MAP,
      kvEventSourceMode: input.kvEventSourceMode,
      incarnation: input.incarnation,
    },
    context,
  );
}

/**
 * `previous` with the patch's present fields: a scalar replaces, a collection replaces whole (no
 * merge of map entries). Nothing can be cleared, since an absent field keeps the old value.
 */
export function patchRecord(previous: CatalogRecord, patch: WorkerPatch, context: BuildContext): Built {
  return judge(
    {
      workerId: previous.workerId,
      model: previous.model,
      tenant: previous.tenant,
      endpoint: patch.endpoint ?? previous.endpoint,
      kvEventsEndpoint: patch.kvEventsEndpoint ?? previous.kvEventsEndpoint,
      kvEventsEndpoints: patch.kvEventsEndpoints ?? previous.kvEventsEndpoints,
      replayEndpoint: patch.replayEndpoint ?? previous.replayEndpoint,
      blockSize: patch.blockSize ?? previous.blockSize,
      dpStart: patch.dpStart ?? previous.dpStart,
      dpSize: patch.dpSize ?? previous.dpSize,
      maxNumBatchedTokens: patch.maxNumBatchedTokens ?? previous.maxNumBatchedTokens,
      totalKvBlocks: patch.totalKvBlocks ?? previous.totalKvBlocks,
      stableRoutingId: patch.stableRoutingId ?? previous.stableRoutingId,
      isEagle: patch.isEagle ?? previous.isEagle,
      taints: patch.taints === undefined ? previous.taints : taintSet(patch.taints),
      topologyDomains: patch.topologyDomains ?? previous.topologyDomains,
      kvTransferDomain: patch.kvTransferDomain ?? previous.kvTransferDomain,
      kvTransferEnforcement: patch.kvTransferEnforcement ?? previous.kvTransferEnforcement,
      kvTransferPreferredWeight: patch.kvTransferPreferredWeight ?? previous.kvTransferPreferredWeight,
      routerHintWorkerType: patch.routerHintWorkerType ?? previous.routerHintWorkerType,
      routerHintSourceControlEndpoints:
        patch.routerHintSourceControlEndpoints ?? previous.routerHintSourceControlEndpoints,
      kvEventSourceMode: patch.kvEventSourceMode ?? previous.kvEventSourceMode,
      // Not patchable: a new life of the worker is a new record, posted whole.
      incarnation: previous.incarnation,
    },
    context,
  );
}

function judge(fields: CatalogFields, context: BuildContext): Built {
  const bytes = recordTextBytes(fields);
  if (bytes > MAX_CATALOG_RECORD_BYTES) {
    return fail("too_large", catalogText.recordTooLarge(MAX_CATALOG_RECORD_BYTES, bytes));
  }
  const reasons = notSchedulableReasons(fields, context.config);
  let fix = context.fix;
  if (reasons.length === 0) {
    const reconciled = reconcile(fix, fields);
    if (reconciled.ok) fix = reconciled.fix;
    else reasons.push(reconciled.reason);
  }
  const lifecycle = reasons.length === 0 ? "schedulable" : "incomplete";
  return { ok: true, record: { ...fields, lifecycle, notSchedulableReasons: reasons }, fix };
}

/** Dynamo's taints are a `HashSet`: duplicates collapse. Kept in UTF-8 byte order, so listings are stable. */
function taintSet(taints: readonly string[]): readonly string[] {
  return [...new Set(taints)].sort(compareUtf8);
}

/** The UTF-8 bytes of every text a record holds, rank keys counted as their decimal digits. */
export function recordTextBytes(fields: CatalogFields): number {
  let bytes = utf8Bytes(fields.model) + utf8Bytes(fields.tenant);
  for (const text of [
    fields.endpoint,
    fields.kvEventsEndpoint,
    fields.replayEndpoint,
    fields.stableRoutingId,
    fields.kvTransferDomain,
    fields.routerHintWorkerType,
    fields.kvEventSourceMode,
  ]) {
    if (text !== undefined) bytes += utf8Bytes(text);
  }
  for (const map of [fields.kvEventsEndpoints, fields.routerHintSourceControlEndpoints]) {
    for (const [rank, url] of map) bytes += String(rank).length + utf8Bytes(url);
  }
  for (const [domain, value] of fields.topologyDomains) bytes += utf8Bytes(domain) + utf8Bytes(value);
  for (const taint of fields.taints) bytes += utf8Bytes(taint);
  return bytes;
}
