/**
 * The catalog a tracker holds: one entry per worker id of its partition, each the worker's winning
 * upsert (with the rank floors merged into it since) and the record judged from it. Judging is
 * derived state, redone whenever the partition's fix may have moved (`catalog-book.ts`); the upsert
 * is what is stored and replicated. Every write reports itself to the store in the same step.
 */
import { compareKeys, type EventKey, isNewer } from "../replica/clock";
import type { CatalogUpsertEvent } from "../replica/events";
import type { TrackerStore } from "../store";
import { CATALOG_CONFIG, type CatalogFields, type CatalogRecord } from "./catalog-record";
import { dpRanks, hasRank, rankCount } from "./dp-ranks";
import { segmentFloor } from "./rank-floors";
import { notSchedulableReasons } from "./schedulable";

export interface CatalogEntry {
  /** The newest upsert of the worker, its floors raised by the older changes merged after it. */
  readonly upsert: CatalogUpsertEvent;
  /** Nothing of reasons 1–5 is missing: the record reaches reconciliation. */
  readonly complete: boolean;
  /** It may fix the partition (`partition-fix.ts`): it is complete, or it kept an earlier candidacy. */
  readonly candidate: boolean;
  /** The record as listed: judged against the partition's fix. */
  record: CatalogRecord;
}

/**
 * The floor of a worker's rank: a booking there is live only if its add is newer. Outside the ranks
 * the winning upsert kept, that upsert itself did not keep the rank, so its own key is the floor.
 */
export function floorAt(entry: CatalogEntry, rank: number): EventKey | undefined {
  const { upsert } = entry;
  if (upsert.keeps !== undefined && hasRank(upsert.keeps, rank)) return segmentFloor(upsert.floors, rank);
  return upsert;
}

/** Whether an add of `key` on `rank` is older than the rank's floor: then it can never be live. */
export function belowFloor(entry: CatalogEntry, rank: number, key: EventKey): boolean {
  const floor = floorAt(entry, rank);
  return floor !== undefined && !isNewer(key, floor);
}

export class CatalogState {
  readonly entries = new Map<bigint, CatalogEntry>();
  /** Writes since this instance was built: a cheap test of whether the catalog may have changed. */
  version = 0;

  constructor(private readonly store: TrackerStore) {}

  get size(): number {
    return this.entries.size;
  }

  /** Makes `upsert` the worker's entry (judged later, by the caller's settle) and persists it. */
  set(upsert: CatalogUpsertEvent): CatalogEntry {
    const entry = entryOf(upsert);
    this.entries.set(upsert.workerId, entry);
    this.version++;
    this.store.catalogSet?.(upsert);
    return entry;
  }

  /** How far back a worker's ranks keep their bookings: its rank floors, if it is a catalog worker. */
  floorsOf(workerId: bigint): ((rank: number) => EventKey | undefined) | undefined {
    const entry = this.entries.get(workerId);
    return entry && ((rank) => floorAt(entry, rank));
  }

  delete(workerId: bigint): void {
    if (!this.entries.delete(workerId)) return;
    this.version++;
    this.store.catalogCleared?.(workerId);
  }

  /** Rebuilds an entry from storage, without reporting to the store. */
  restore(upsert: CatalogUpsertEvent): void {
    this.entries.set(upsert.workerId, entryOf(upsert));
  }
}

function entryOf(upsert: CatalogUpsertEvent): CatalogEntry {
  const reasons = notSchedulableReasons(upsert.fields, CATALOG_CONFIG);
  const kept = compareKeys(upsert.candidacy, upsert) !== 0;
  return {
    upsert,
    complete: reasons.length === 0,
    candidate: isCandidate(upsert.fields, reasons.length === 0, kept),
    record: { ...upsert.fields, lifecycle: "incomplete", notSchedulableReasons: reasons },
  };
}

/**
 * Whether a record may fix its partition: one that reaches reconciliation does (Dynamo's rule), and
 * so does one that fixed it before and keeps its block size and eagle flag (`kept`), also while it
 * lacks an endpoint: in Dynamo the partition's entry outlives that, and a `/register`ed worker,
 * which fixes a tracker's block size without an endpoint, stays a founder when a PATCH makes it a
 * catalog record.
 */
export function isCandidate(fields: CatalogFields, complete: boolean, kept: boolean): boolean {
  return complete || (kept && (fields.blockSize ?? 0) > 0 && rankCount(dpRanks(fields)) > 0);
}
