/**
 * The catalog's writes at the replica that accepts them: judge the write, compute what it keeps, and
 * apply it as the very change every other replica merges (`catalog-merge.ts`), then ship it. A
 * write is refused before anything is stamped or stored. Worker ids are the partition's here; the
 * Worker moves a worker between partitions by a removal in one tracker and an upsert in the other.
 */
import type { Failure, Result } from "../../types";
import { supersedes } from "../incarnation";
import { fail } from "../messages";
import { catalogYields, floorsBefore, mergeCatalogUpsert } from "../replica/catalog-merge";
import type { CatalogUpsertEvent } from "../replica/events";
import type { TrackerLimits, TrackerState } from "../tracker-state";
import { reconcilePartition } from "./catalog-book";
import { catalogText } from "./catalog-messages";
import { CATALOG_CONFIG, type CatalogFields, type CatalogRecord } from "./catalog-record";
import { isCandidate } from "./catalog-state";
import { type Deletion, deletionOf, transitionOf } from "./lifecycle";
import { agrees, candidateOf, judgeRecord, keptCandidacy, partitionFix } from "./partition-fix";
import { notSchedulableReasons } from "./schedulable";
import { catalogView, recordOfRegistration, slotTrackerEntry } from "./slot-tracker-meeting";

/** The partition's catalog as listed: its records, and a record for each `/register`ed worker without one. */
export function catalogRecords(tracker: TrackerState): CatalogRecord[] {
  const records = new Map<bigint, CatalogRecord>();
  for (const [workerId, entry] of tracker.catalog.entries) records.set(workerId, entry.record);
  const registered = [...tracker.book.workers.values()].filter((w) => !records.has(w.workerId));
  return catalogView(
    records,
    registered.map((w) => w.input),
    tracker.model,
    tracker.tenant,
  );
}

/** The record the catalog lists for `workerId`, if it lists one. */
export function catalogRecordOf(tracker: TrackerState, workerId: bigint): CatalogRecord | undefined {
  const entry = tracker.catalog.entries.get(workerId);
  if (entry) return entry.record;
  const registered = tracker.book.workers.get(workerId);
  return registered && recordOfRegistration(registered.input, tracker.model, tracker.tenant);
}

/**
 * Writes `fields` (a POST's record, or a PATCH merged into the current one) as the worker's record.
 * Refused with 429 when a new worker would pass the tracker's worker cap, or its ranks the rank cap.
 */
export function writeRecord(
  tracker: TrackerState,
  written: CatalogFields,
  now: number,
  limits: TrackerLimits,
): Result<{ record: CatalogRecord }> {
  // As a peer decodes it: an absent field has no key.
  const fields = Object.fromEntries(
    Object.entries(written).filter(([, value]) => value !== undefined),
  ) as unknown as CatalogFields;
  const { workerId } = fields;
  if (fields.model !== tracker.model || fields.tenant !== tracker.tenant) {
    return fail("invalid_input", `worker ${workerId} names another partition than this tracker's`);
  }
  const previous = catalogRecordOf(tracker, workerId);
  if (previous === undefined && !tracker.records.excluded.has(workerId)) {
    if (catalogRecords(tracker).length >= limits.maxWorkers) {
      return fail("limit_exceeded", `worker limit reached: at most ${limits.maxWorkers} workers per tracker`);
    }
  }
  const fixBefore = partitionFix(tracker);
  const complete = notSchedulableReasons(fields, CATALOG_CONFIG).length === 0;
  const kept = keptCandidacy(tracker, fields);
  const key = tracker.stamp(now);
  const candidacy = kept ?? key;
  const agreed = agrees(tracker, fields);
  const fixAfter = partitionFix(tracker, {
    workerId,
    candidate: isCandidate(fields, complete, kept !== undefined)
      ? candidateOf(fields, candidacy, agreed)
      : undefined,
  });
  const next = judgeRecord(fields, fixAfter);
  const ranks = slotTrackerEntry(next, fixAfter)?.dpSize ?? 0;
  const held = tracker.book.workers.get(workerId)?.dpSize ?? 0;
  if (tracker.book.rankCount - held + ranks > limits.maxRanks) {
    return fail(
      "limit_exceeded",
      `rank limit reached: at most ${limits.maxRanks} data-parallel ranks per tracker (data_parallel_size=${ranks})`,
    );
  }
  const transition = transitionOf(previous, next, fixBefore, fixAfter);
  // A worker that stops being schedulable is drained: it keeps no bookings (reference selection §7);
  // nor does a later life of it (`incarnation.ts`), whose ranks held the last life's requests.
  const reborn = previous !== undefined && supersedes(fields, previous);
  const keeps = transition.drains || reborn ? undefined : transition.ranks.kept;
  const event: CatalogUpsertEvent = {
    ts: key.ts,
    origin: key.origin,
    type: "catalog_upsert",
    workerId,
    fields,
    candidacy,
    agreed,
    ...(keeps && { keeps }),
    floors: floorsBefore(tracker, workerId, keeps),
  };
  mergeCatalogUpsert(tracker, event);
  tracker.emitExternal(event);
  return { ok: true, record: tracker.catalog.entries.get(workerId)!.record };
}

/**
 * `DELETE /selection/workers/{id}` (and `/unregister` of a catalog worker): Dynamo drains the worker,
 * drops its bookings and index entries, marks it `unschedulable` and forgets it. Here that is one
 * synchronous step, so no reader sees the draining record; the answer is the final one.
 */
export function removeRecord(
  tracker: TrackerState,
  workerId: bigint,
  now: number,
): Result<{ deletion: Deletion }> | Failure {
  const previous = catalogRecordOf(tracker, workerId);
  if (previous === undefined) return fail("worker_not_found", catalogText.workerNotFound(workerId));
  const key = tracker.stamp(now);
  const event = { ts: key.ts, origin: key.origin, type: "catalog_remove" as const, workerId };
  // The record (if any) goes; the rest is the registry's unregistration, as every replica merges it.
  catalogYields(tracker, event);
  const worker = tracker.book.workers.get(workerId);
  const dropped = worker ? tracker.removeWorker(worker, now) : [];
  if (tracker.replicated) {
    for (const req of dropped) tracker.remember(req);
    tracker.records.setGone(workerId, key);
    tracker.records.clearExcluded(workerId);
    for (const orphan of tracker.records.orphansOf(workerId)) tracker.records.retireOrphan(orphan);
  }
  // The founder may have left: another candidate may fix the partition now.
  reconcilePartition(tracker);
  tracker.emitExternal(event);
  return { ok: true, deletion: deletionOf(previous) };
}
