/**
 * The selection API's read-only views of one partition (reference selection §1.1, §6): loads,
 * potential loads and tiered overlap per rank of its schedulable workers, and the cache index in
 * Dynamo's recovery form. Rows go in (worker id, dp rank) order, where Dynamo's follow a hash map.
 */
import type { OverlapRow, OverlapScores, PromptQuery, SelectionLoad } from "../../selection-types";
import type { Result } from "../../types";
import type { RouterEvent } from "../cache-index/cache-index";
import {
  cachedTokens,
  effectiveOverlapBlocks,
  potentialDecodeBlocks,
  potentialPrefillTokens,
} from "../routing/dynamo-cost";
import type { SelectionSettings } from "../routing/router-config-override";
import type { Candidate } from "./candidates";
import { prepare, type SelectionContext } from "./select";

const EMPTY = new BigUint64Array(0);

/** `/loads`: each schedulable rank's active prefill, active blocks and live requests; null with none. */
export function selectionLoads(ctx: SelectionContext): SelectionLoad[] | null {
  const prepared = prepare(ctx, { kind: "hashes", sequenceHashes: EMPTY, islTokens: 0 }, undefined);
  if (!prepared.ok) return null;
  return prepared.ranks.map((c) => ({
    workerId: c.workerId,
    dpRank: c.dpRank,
    potentialPrefillTokens: c.load.activePrefillTokens,
    potentialDecodeBlocks: c.load.activeDecodeBlocks,
    activeRequests: c.load.activeRequests,
  }));
}

/** `/potential_loads` with the cache credit: the prefill a rank would add is what it has not cached. */
export function selectionPotentialLoads(
  ctx: SelectionContext,
  query: PromptQuery,
): Result<{ loads: SelectionLoad[] }> {
  const prepared = prepare(ctx, query.prompt, query.override);
  if (!prepared.ok) return prepared;
  const { partition, prompt, settings, ranks } = prepared;
  const loads = ranks.map((c) => {
    const cached = cachedTokens(effectiveOverlapBlocks(c.hits, settings), partition.blockSize);
    return {
      workerId: c.workerId,
      dpRank: c.dpRank,
      potentialPrefillTokens: potentialPrefillTokens(
        c.load.activePrefillTokens,
        prompt.isl,
        cached,
        settings.trackPrefillTokens,
      ),
      potentialDecodeBlocks: potentialDecodeBlocks(c.load),
      activeRequests: c.load.activeRequests,
    };
  });
  return { ok: true, loads };
}

/** `/overlap_scores`: every schedulable rank's blocks of the prompt by tier, and the credit they earn. */
export function overlapScores(ctx: SelectionContext, query: PromptQuery): Result<OverlapScores> {
  const prepared = prepare(ctx, query.prompt, query.override);
  if (!prepared.ok) return prepared;
  const { partition, prompt, settings, ranks } = prepared;
  return {
    ok: true,
    blockSize: partition.blockSize,
    numBlocks: prompt.index?.localHashes.length ?? prompt.tracking.length,
    workers: ranks.map((c) => overlapRow(c, settings)),
  };
}

function overlapRow(c: Candidate, weights: SelectionSettings): OverlapRow {
  const { device, hostPinned, disk, external } = c.hits;
  return {
    workerId: c.workerId,
    dpRank: c.dpRank,
    deviceBlocks: device,
    hostPinnedBlocks: device + hostPinned,
    diskBlocks: device + hostPinned + disk + external,
    hostPinnedExtensionBlocks: hostPinned,
    diskExtensionBlocks: disk + external,
    routerCreditBlocks:
      weights.overlapScoreCredit * device +
      weights.hostCacheHitWeight * hostPinned +
      weights.diskCacheHitWeight * (disk + external),
  };
}

/** `/dump`'s entry for this partition: its block size and the index as Stored router events. */
export function cacheDump(ctx: SelectionContext): { blockSize: number; events: RouterEvent[] } | null {
  const blockSize = ctx.partition?.blockSize ?? ctx.tracker.blockSize;
  if (blockSize === undefined) return null;
  ctx.tracker.expire(ctx.now);
  return { blockSize, events: ctx.tracker.cache.dump() };
}
