/**
 * The (worker, rank)s a selection may choose among, each with what the cost needs (reference
 * selection §4.1, §4.4): its tier hits from the cache index and its load projection from the live
 * book. A candidate is a rank of a schedulable worker that the book holds, within the request's
 * constraints.
 */
import type { SelectionConstraints } from "../../selection-types";
import type { RankOverlap } from "../cache-index/cache-index";
import type { CandidateRank } from "../routing/dynamo-choice";
import { NO_HITS, type TierHits } from "../routing/dynamo-cost";
import type { Tracker } from "../tracker";
import { hasRank, type SchedulablePartition, type SchedulableWorker } from "./schedulable";
import type { NormalizedPrompt } from "./selection-prompt";

export interface Candidate extends CandidateRank {
  worker: SchedulableWorker;
}

/**
 * Every rank of the partition's schedulable workers that the book holds, with its figures. Ranks are
 * matched by their slot's dense id, not by a `worker/rank` string: turning a 64-bit worker id into
 * text for each of the partition's ranks on every selection cost more than the rest of this function.
 * A rank's load is read off its slot in the same pass (what `potentialLoads` and `listLoads` report
 * of it, without their two lists of every rank of the book).
 */
export function partitionRanks(
  tracker: Tracker,
  partition: SchedulablePartition,
  prompt: NormalizedPrompt,
  now: number,
): Candidate[] {
  const book = tracker.book;
  const hits: (RankOverlap | undefined)[] = [];
  if (prompt.index) {
    for (const row of tracker.cache.overlap(prompt.index, now)) {
      // The index may hold ranks the book does not (yet, or any longer): no candidate reads those.
      const slot = book.slotOf(row.workerId, row.dpRank);
      if (slot) hits[slot.id] = row;
    }
  }
  const candidates: Candidate[] = [];
  const depths = tracker.liveOverlapDepths(prompt.tracking, now);
  if (!depths) return candidates;
  const queryBlocks = prompt.tracking.length;
  for (const worker of partition.workers) {
    const entry = book.workers.get(worker.workerId);
    if (!entry) continue;
    for (const slot of entry.slots) {
      if (!hasRank(worker, slot.dpRank)) continue;
      candidates.push({
        workerId: slot.workerId,
        dpRank: slot.dpRank,
        hits: tierHits(hits[slot.id]),
        load: {
          activePrefillTokens: slot.prefill.activeTokens(now),
          activeDecodeBlocks: book.activeBlocks(slot),
          // The blocks a booking here would add: the prompt's, less those live requests hold.
          additionalActiveBlocks: queryBlocks - depths[slot.id]!,
          activeRequests: slot.requests,
        },
        taints: worker.taints,
        worker,
      });
    }
  }
  return candidates;
}

/** The candidates the request's constraints leave: allowed workers with every required taint. */
export function eligible(candidates: readonly Candidate[], constraints: SelectionConstraints): Candidate[] {
  const allowed = constraints.allowedWorkerIds && new Set(constraints.allowedWorkerIds);
  const required = constraints.requiredTaints ?? [];
  return candidates.filter(
    (c) =>
      (!allowed || allowed.has(c.workerId)) && required.every((taint) => c.worker.taints.includes(taint)),
  );
}

function tierHits(row: RankOverlap | undefined): TierHits {
  if (!row) return NO_HITS;
  return {
    device: row.deviceBlocks,
    hostPinned: row.hostPinnedBlocks,
    disk: row.diskBlocks,
    external: row.externalBlocks,
  };
}
