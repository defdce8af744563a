/**
 * Where the catalog meets the slot-tracker API (SPEC §7: one tracker, two APIs). Both register
 * workers in the same tracker, and each API shows the other's:
 *
 * - A worker `/register`ed without a catalog record lists in the catalog as the record
 *   `recordOfRegistration` makes: its id, block size and DP range, no endpoint, so `incomplete` with
 *   "endpoint is required" until a catalog call gives it one (that call replaces the record whole).
 * - A catalog record is in the slot tracker's registry (and its `/workers`) when `slotTrackerEntry`
 *   gives it an entry: a block size and a DP range, and a block size the tracker can hold. A
 *   `schedulable` record reconciled, so it has the partition's block size; an `incomplete` one
 *   joins only a partition already fixed with its block size, because in Dynamo only a worker that
 *   reaches reconciliation fixes the partition. A `/register`ed worker does fix it (the slot-tracker
 *   API fixes a tracker's block size with its first worker), with the eagle flag off, and so does a
 *   worker that fixed it before and keeps its block size (`isCandidate` in `catalog-state.ts`).
 *
 * Where the two meet on one worker id in one tracker, one definition stands (`catalog-writes.ts`,
 * `Tracker.register` and `unregister`):
 * - a catalog write over a `/register`ed worker replaces the registration: the worker keeps its book
 *   entry, and its live bookings on the ranks both shapes share, as every range change does, unless
 *   it carries a higher `incarnation` than the registration's (listed as its record's), when it
 *   keeps none, as a higher one over a record does;
 * - `/register` of an id the catalog holds is the duplicate 409, whether or not the record is in
 *   the registry (change it through the catalog), and also with a higher `incarnation`: the catalog
 *   owns that worker, so its next life is a catalog upsert with the higher incarnation, which drops
 *   its bookings in the same way; a `/register` that replaced the record would instead have to
 *   settle the record's partition fix and floors in a change the catalog did not make;
 *   `/unregister` of a catalog worker in the registry
 *   removes the record as well (one `catalog_remove`), of one outside it answers 404 as for any
 *   worker the slot tracker does not list;
 * - ids are per tracker in the slot-tracker API and service-wide in the selection API, so a catalog
 *   write naming another partition moves the worker out of every tracker listing the id, a
 *   `/register`ed one included (the Worker does that: `src/routes/selection/workers.ts`).
 */
import type { WorkerInfo } from "../../types";
import { CATALOG_CONFIG, type CatalogConfig, type CatalogRecord, type PartitionFix } from "./catalog-record";
import { dpRanks, rankCount } from "./dp-ranks";
import { notSchedulableReasons } from "./schedulable";

/** A worker as the slot tracker's registry holds it: ranks `dpStart ..< dpStart + dpSize`, within u32. */
export interface SlotTrackerEntry {
  readonly workerId: bigint;
  /** Tokens per KV block (u32, ≥ 1). */
  readonly blockSize: number;
  readonly dpStart: number;
  /** u32, ≥ 1. */
  readonly dpSize: number;
}

const NO_RANK_MAP: ReadonlyMap<number, string> = new Map();
const NO_DOMAINS: ReadonlyMap<string, string> = new Map();

/** The eagle flag of a partition fixed by `/register`, which has no such field. */
export const REGISTERED_IS_EAGLE = false;

/**
 * A `/register`ed worker of the tracker (model, tenant) as the catalog lists it. It lacks an
 * endpoint, so it never reaches reconciliation: it is `incomplete`, whatever the partition's fix.
 */
export function recordOfRegistration(
  worker: Pick<WorkerInfo, "workerId" | "blockSize" | "dpStart" | "dpSize" | "incarnation">,
  model: string,
  tenant: string,
  config: CatalogConfig = CATALOG_CONFIG,
): CatalogRecord {
  const fields = {
    workerId: worker.workerId,
    model,
    tenant,
    kvEventsEndpoints: NO_RANK_MAP,
    blockSize: worker.blockSize,
    dpStart: worker.dpStart,
    dpSize: worker.dpSize,
    taints: [],
    topologyDomains: NO_DOMAINS,
    routerHintSourceControlEndpoints: NO_RANK_MAP,
    // Its incarnation is the one a catalog write over it must pass to start the worker's next life.
    ...(worker.incarnation !== undefined && { incarnation: worker.incarnation }),
  };
  return { ...fields, lifecycle: "incomplete", notSchedulableReasons: notSchedulableReasons(fields, config) };
}

/**
 * The slot-tracker registry entry of a catalog record, or undefined when the record stays out of the
 * registry. The range is Dynamo's saturated one, so it always fits u32; an empty one stays out.
 */
export function slotTrackerEntry(
  record: CatalogRecord,
  fix: PartitionFix | undefined,
): SlotTrackerEntry | undefined {
  const { blockSize } = record;
  if (blockSize === undefined || blockSize === 0) return undefined;
  const ranks = dpRanks(record);
  if (rankCount(ranks) === 0) return undefined;
  const joins =
    record.lifecycle === "schedulable" || (record.lifecycle === "incomplete" && fix?.blockSize === blockSize);
  if (!joins) return undefined;
  return { workerId: record.workerId, blockSize, dpStart: ranks.start, dpSize: rankCount(ranks) };
}

/**
 * The catalog of one tracker as listed: its records, and a record made by `recordOfRegistration`
 * for each registered worker that has none.
 */
export function catalogView(
  records: ReadonlyMap<bigint, CatalogRecord>,
  registered: Iterable<Pick<WorkerInfo, "workerId" | "blockSize" | "dpStart" | "dpSize" | "incarnation">>,
  model: string,
  tenant: string,
  config: CatalogConfig = CATALOG_CONFIG,
): CatalogRecord[] {
  const view = [...records.values()];
  for (const worker of registered) {
    if (!records.has(worker.workerId)) view.push(recordOfRegistration(worker, model, tenant, config));
  }
  return view;
}
