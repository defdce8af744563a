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

const rankKey = (workerId: bigint, dpRank: number) => `${workerId}/${dpRank}`;

/** Every rank of the partition's schedulable workers that the book holds, with its figures. */
export function partitionRanks(
  tracker: Tracker,
  partition: SchedulablePartition,
  prompt: NormalizedPrompt,
  now: number,
): Candidate[] {
  const hits = new Map<string, RankOverlap>();
  if (prompt.index) {
    for (const row of tracker.cache.overlap(prompt.index, now))
      hits.set(rankKey(row.workerId, row.dpRank), row);
  }
  const loads = tracker.potentialLoads(prompt.tracking, 0, now);
  const active = tracker.listLoads(now);
  const byRank = new Map<string, number>();
  if (loads.ok) {
    for (const [i, load] of loads.loads.entries()) byRank.set(rankKey(load.workerId, load.dpRank), i);
  }
  const candidates: Candidate[] = [];
  for (const worker of partition.workers) {
    const entry = tracker.book.workers.get(worker.workerId);
    if (!entry || !loads.ok) continue;
    for (const slot of entry.slots) {
      if (!hasRank(worker, slot.dpRank)) continue;
      const key = rankKey(slot.workerId, slot.dpRank);
      const i = byRank.get(key)!;
      const load = loads.loads[i]!;
      const activeBlocks = active[i]!.activeDecodeBlocks;
      candidates.push({
        workerId: slot.workerId,
        dpRank: slot.dpRank,
        hits: tierHits(hits.get(key)),
        load: {
          activePrefillTokens: active[i]!.activePrefillTokens,
          activeDecodeBlocks: activeBlocks,
          additionalActiveBlocks: load.potentialDecodeBlocks - activeBlocks,
          activeRequests: load.activeRequests,
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
