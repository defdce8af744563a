/**
 * `core/selection/`: the selection API's booking path on the tracker (reference selection §1.5–1.7,
 * §4–§6): prompts normalized for the index and the tracker (`selection-prompt.ts`), the candidates
 * and the choice (`candidates.ts`, `select.ts`), pending selections (`pending-selections.ts`),
 * bookings and reservations (`reservations.ts`), the per-reservation lifecycle (`lifecycle.ts`) and
 * the read-only views (`selection-views.ts`).
 *
 * This file is the lower one: which workers of a partition the selection API may choose, as the
 * catalog says (`core/catalog/`), and the partition's hashing shape.
 */
import type { WorkerRank } from "../../selection-types";
import { partitionFix } from "../catalog/partition-fix";
import { compareBigint } from "../order";
import type { TrackerState } from "../tracker-state";

/** A `schedulable` catalog worker of the partition, as selection reads it. */
export interface SchedulableWorker {
  workerId: bigint;
  /** Where requests for the worker go (non-empty). */
  endpoint: string;
  /** Global DP ranks `dpStart ..< dpStart + dpSize`, saturated at u32 (`dp-ranks.ts`). */
  dpStart: number;
  dpSize: number;
  taints: readonly string[];
  /** KV blocks the worker's cache holds (u64), if given. */
  totalKvBlocks?: bigint;
  /** Tokens one engine step may batch (u64), if given. */
  maxNumBatchedTokens?: bigint;
}

/** A partition with at least one schedulable worker. */
export interface SchedulablePartition {
  /** Tokens per KV block, fixed by the partition's first reconciled worker. */
  blockSize: number;
  /** The partition's eagle flag: a prompt's default. */
  isEagle: boolean;
  /** In worker id order. */
  workers: readonly SchedulableWorker[];
}

const U32_MAX = 0xffff_ffff;

export function hasRank(worker: SchedulableWorker, rank: number): boolean {
  return rank >= worker.dpStart && rank < Math.min(worker.dpStart + worker.dpSize, U32_MAX);
}

/** The schedulable worker holding `at`, if there is one. */
export function workerAt(
  partition: SchedulablePartition | undefined,
  at: WorkerRank,
): SchedulableWorker | undefined {
  const worker = partition?.workers.find((w) => w.workerId === at.workerId);
  return worker && hasRank(worker, at.dpRank) ? worker : undefined;
}

/**
 * The partition as the worker catalog holds it (`core/catalog/`, reference selection §7): its
 * `schedulable` records in worker id order, with the partition's fix (block size and eagle flag).
 * `/register`ed workers are no part of it: they list as `incomplete` ("endpoint is required") until a
 * catalog write gives them an endpoint, as `slot-tracker-meeting.ts` says. Undefined while no record
 * is schedulable. Derived from the judged records, which every catalog or registration change
 * settles (`catalog-book.ts`), so a caller may keep it while `tracker.rosterVersion` stays.
 */
export function catalogPartition(tracker: TrackerState): SchedulablePartition | undefined {
  const workers: SchedulableWorker[] = [];
  for (const { record } of tracker.catalog.entries.values()) {
    if (record.lifecycle !== "schedulable" || record.endpoint === undefined) continue;
    workers.push({
      workerId: record.workerId,
      endpoint: record.endpoint,
      dpStart: record.dpStart ?? 0,
      dpSize: record.dpSize ?? 1,
      taints: record.taints,
      totalKvBlocks: record.totalKvBlocks,
      maxNumBatchedTokens: record.maxNumBatchedTokens,
    });
  }
  const fix = workers.length > 0 ? partitionFix(tracker) : undefined;
  if (fix === undefined) return undefined;
  workers.sort((a, b) => compareBigint(a.workerId, b.workerId));
  return { blockSize: fix.blockSize, isEagle: fix.isEagle, workers };
}
