/**
 * The selection service's choice among eligible (worker, rank)s (reference selection §4.5,
 * `pick_default_worker`): each rank's cost, then the lowest (exact ties broken uniformly at
 * random) at temperature 0, or a softmax draw above it. Randomness comes from the injected `Rng`.
 *
 * Rows are scored and drawn in (worker id, dp rank) order, whatever order the caller lists them
 * in. Dynamo walks a hash map (unspecified order) in production and sorts this way in its seeded
 * tests; a fixed order is what makes a seeded test, and two replicas with the same draws, choose
 * the same rank.
 */
import {
  cachedTokens,
  effectiveOverlapBlocks,
  effectivePrefillTokens,
  potentialDecodeBlocks,
  potentialDecodeBlocksAfterAdmission,
  potentialPrefillTokens,
  preferredTaintMultiplier,
  type RankLoad,
  type TierHits,
  workerLogit,
} from "./dynamo-cost";
import { drawIndex, type Rng } from "./rng";
import type { SelectionSettings } from "./router-config-override";
import { softmaxProbabilities } from "./selection";

export interface CandidateRank {
  workerId: bigint;
  dpRank: number;
  hits: TierHits;
  load: RankLoad;
  /** The worker's taints, matched against the request's preferred taints. */
  taints?: readonly string[];
}

export interface SelectionRequest {
  /** Tokens of the prompt; > 0. */
  isl: number;
  /** Tokens per block. */
  blockSize: number;
  /** The prompt's tracking sequence hashes, `len(S)`: blocks. */
  trackedBlocks: number;
  settings: SelectionSettings;
  /** `routing_constraints.preferred_taints`: weight per taint name. */
  preferredTaints?: Readonly<Record<string, number>>;
  /**
   * The candidates are a rank the request is held to (`pinned_worker`, an affinity target, a bound
   * session): pass that rank alone. Dynamo scores it without the taint multiplier and chooses it
   * without a draw.
   */
  pinned?: boolean;
}

/** A candidate's figures as the responses report them. */
export interface RankFigures {
  /** Cache-weighted blocks of the prompt the rank holds (§4.1). */
  effectiveOverlapBlocks: number;
  /** Tokens: those blocks × block size, rounded. */
  cachedTokens: number;
  /** Tokens still to prefill there: `SelectResponse.effective_prefill_tokens`. */
  effectivePrefillTokens: number;
  /** Tokens: `/potential_loads`' `potential_prefill_tokens`. */
  potentialPrefillTokens: number;
  /** Blocks: `/potential_loads`' `potential_decode_blocks` (no untracked tail). */
  potentialDecodeBlocks: number;
  /** Blocks: `SelectResponse.potential_decode_blocks`, with the untracked tail. */
  potentialDecodeBlocksAfterAdmission: number;
}

export interface ScoredRank {
  candidate: CandidateRank;
  /** The logit, times the preferred-taint multiplier when there is one; blocks. */
  cost: number;
}

export interface SelectedRank extends ScoredRank {
  figures: RankFigures;
}

/** Every candidate's cost, in (worker id, dp rank) order. */
export function scoreCandidates(
  candidates: readonly CandidateRank[],
  request: SelectionRequest,
): ScoredRank[] {
  const { isl, blockSize, settings } = request;
  const ordered = [...candidates].sort(byWorkerThenRank);
  const minActivePrefillTokens = ordered.reduce(
    (min, c) => Math.min(min, c.load.activePrefillTokens),
    ordered.length > 0 ? Number.POSITIVE_INFINITY : 0,
  );
  const context = { isl, blockSize, settings, minActivePrefillTokens };
  return ordered.map((candidate) => {
    const logit = workerLogit(candidate.hits, candidate.load, context);
    const multiplier = request.pinned
      ? undefined
      : preferredTaintMultiplier(request.preferredTaints, candidate.taints ?? []);
    return { candidate, cost: multiplier === undefined ? logit : logit * multiplier };
  });
}

/** The chosen candidate with its figures, or `undefined` when there is none to choose. */
export function selectRank(
  candidates: readonly CandidateRank[],
  request: SelectionRequest,
  rng: Rng,
): SelectedRank | undefined {
  const scored = scoreCandidates(candidates, request);
  if (scored.length === 0) return undefined;
  const costs = scored.map((s) => s.cost);
  const temperature = request.settings.routerTemperature;
  const index =
    request.pinned && scored.length === 1
      ? 0
      : temperature === 0
        ? pickLowestCost(costs, rng)
        : pickBySoftmax(costs, temperature, rng);
  const chosen = scored[index]!;
  return { ...chosen, figures: rankFigures(chosen.candidate, request) };
}

/**
 * The index of the lowest cost. Exact ties are broken uniformly by reservoir sampling (the k-th
 * tie takes the place with probability 1/k), as Dynamo does: a fixed tie-break would send every
 * request to an idle fleet's first worker.
 */
export function pickLowestCost(costs: readonly number[], rng: Rng): number {
  let best = -1;
  let bestCost = Number.POSITIVE_INFINITY;
  let ties = 0;
  for (const [i, cost] of costs.entries()) {
    if (cost < bestCost) {
      best = i;
      bestCost = cost;
      ties = 1;
    } else if (cost === bestCost) {
      ties++;
      if (drawIndex(rng, ties) === 0) best = i;
    }
  }
  // Only NaN costs leave nothing chosen; validated settings cannot produce them.
  return Math.max(best, 0);
}

/**
 * One softmax draw: `p_i ∝ exp(−(c_i − c_min) / ((c_max − c_min) × T))`, uniform when all costs are
 * equal; draw u in [0, 1) and take the first row whose cumulative probability is ≥ u
 * (`softmax_sample_index`), the last row if rounding leaves the sum below u.
 */
export function pickBySoftmax(costs: readonly number[], temperature: number, rng: Rng): number {
  const p = softmaxProbabilities(costs, temperature);
  const u = rng();
  let cumulative = 0;
  for (let i = 0; i < p.length; i++) {
    cumulative += p[i]!;
    if (u <= cumulative) return i;
  }
  return p.length - 1;
}

/** The figures the responses report for `candidate`. */
export function rankFigures(candidate: CandidateRank, request: SelectionRequest): RankFigures {
  const { isl, blockSize, settings } = request;
  const blocks = effectiveOverlapBlocks(candidate.hits, settings);
  const cached = cachedTokens(blocks, blockSize);
  return {
    effectiveOverlapBlocks: blocks,
    cachedTokens: cached,
    effectivePrefillTokens: effectivePrefillTokens(isl, cached),
    potentialPrefillTokens: potentialPrefillTokens(
      candidate.load.activePrefillTokens,
      isl,
      cached,
      settings.trackPrefillTokens,
    ),
    potentialDecodeBlocks: potentialDecodeBlocks(candidate.load),
    potentialDecodeBlocksAfterAdmission: potentialDecodeBlocksAfterAdmission(
      candidate.load,
      isl,
      blockSize,
      request.trackedBlocks,
    ),
  };
}

function byWorkerThenRank(a: CandidateRank, b: CandidateRank): number {
  if (a.workerId !== b.workerId) return a.workerId < b.workerId ? -1 : 1;
  return a.dpRank - b.dpRank;
}
