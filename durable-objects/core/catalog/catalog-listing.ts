/**
 * Reading the catalog: `GET /workers` (filtered, sorted), `GET /ready` (catalog-wide), and whether a
 * partition can take a selection. Records come from every tracker the reader gathered; the order is
 * Dynamo's (model name, routing group, worker id), names by UTF-8 bytes as Rust compares them.
 */
import type { Failure } from "../../types";
import { fail } from "../messages";
import { catalogText } from "./catalog-messages";
import type { CatalogRecord } from "./catalog-record";
import { compareBigint, compareUtf8 } from "../order";

export function compareRecords(a: CatalogRecord, b: CatalogRecord): number {
  return (
    compareUtf8(a.model, b.model) || compareUtf8(a.tenant, b.tenant) || compareBigint(a.workerId, b.workerId)
  );
}

/** `GET /workers` filters; each absent one matches every record. */
export interface CatalogFilter {
  readonly model?: string;
  readonly tenant?: string;
}

export function listRecords(records: Iterable<CatalogRecord>, filter: CatalogFilter = {}): CatalogRecord[] {
  const listed: CatalogRecord[] = [];
  for (const record of records) {
    if (filter.model !== undefined && record.model !== filter.model) continue;
    if (filter.tenant !== undefined && record.tenant !== filter.tenant) continue;
    listed.push(record);
  }
  return listed.sort(compareRecords);
}

export interface Readiness {
  /** Not shutting down, and at least one schedulable worker anywhere; `/ready` answers 200, else 503. */
  readonly ready: boolean;
  /** Schedulable records across the whole catalog, every partition. */
  readonly schedulableWorkers: number;
  /** Every record, sorted as `GET /workers` sorts. */
  readonly workers: readonly CatalogRecord[];
}

export function readiness(records: Iterable<CatalogRecord>, shuttingDown = false): Readiness {
  const workers = listRecords(records);
  const schedulableWorkers = workers.filter((record) => record.lifecycle === "schedulable").length;
  return { ready: !shuttingDown && schedulableWorkers > 0, schedulableWorkers, workers };
}

/**
 * Dynamo's `ready_entry`: why (model, tenant) cannot take a selection, or undefined when it can.
 * Nothing schedulable anywhere reads as the catalog-wide text; otherwise the partition's own.
 */
export function partitionNotReady(
  records: Iterable<CatalogRecord>,
  model: string,
  tenant: string,
): Failure | undefined {
  let anywhere = false;
  for (const record of records) {
    if (record.lifecycle !== "schedulable") continue;
    if (record.model === model && record.tenant === tenant) return undefined;
    anywhere = true;
  }
  return anywhere
    ? fail("no_worker", catalogText.noSchedulableWorkersFor(model, tenant))
    : fail("no_worker", catalogText.noSchedulableWorkers());
}
