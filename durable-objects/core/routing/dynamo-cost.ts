/**
 * Dynamo's selection-service cost of one (worker, rank) for one prompt (reference selection §4):
 * the cache signals from the index's tier hits (`OverlapAnalysis::signals`), effective prefill,
 * the load projection's decode blocks, `/potential_loads`' prefill tokens, and the logit of
 * `DefaultWorkerScorer::worker_logit`. Pure arithmetic; `dynamo-choice.ts` picks among the logits.
 *
 * Token counts and block counts are integers; the cache-weighted block counts and the logit are not.
 */
import type { SelectionSettings } from "./router-config-override";

/** What the index holds of the prompt's prefix on one rank, in blocks, by tier (§4.1). */
export interface TierHits {
  /** Leading prompt blocks held on the device (GPU): the longest matched prefix. */
  device: number;
  /** Blocks in host-pinned memory (CPU) continuing past the device prefix. */
  hostPinned: number;
  /** Blocks on local disk continuing past the host-pinned ones. */
  disk: number;
  /** Blocks in external storage; weighted and reported as disk. */
  external: number;
}

export const NO_HITS: Readonly<TierHits> = Object.freeze({ device: 0, hostPinned: 0, disk: 0, external: 0 });

/** A rank's load projection for this request (`WorkerLoadProjection`, §4.4). */
export interface RankLoad {
  /** Tokens: the effective prefill of the rank's bookings that are not yet prefill-complete. */
  activePrefillTokens: number;
  /** Blocks: the union of the rank's live requests' sequence hashes, plus their output blocks. */
  activeDecodeBlocks: number;
  /** Blocks: this request's sequence hashes beyond the longest prefix already active on the rank. */
  additionalActiveBlocks: number;
  /** Live requests on the rank. */
  activeRequests: number;
}

export type CacheWeights = Pick<SelectionSettings, "hostCacheHitWeight" | "diskCacheHitWeight">;

/**
 * `device + host_weight × host + disk_weight × (disk + external)`, in blocks. The credit is not
 * applied here: this is how much of the prompt counts as cached, not what the cost gives for it.
 */
export function effectiveOverlapBlocks(hits: TierHits, weights: CacheWeights): number {
  let blocks = hits.device;
  // Dynamo skips a tier whose weight is 0 and a rank with 0 hits in it; the sum is the same.
  if (weights.hostCacheHitWeight !== 0 && hits.hostPinned !== 0)
    blocks += hits.hostPinned * weights.hostCacheHitWeight;
  if (weights.diskCacheHitWeight !== 0) {
    if (hits.disk !== 0) blocks += hits.disk * weights.diskCacheHitWeight;
    if (hits.external !== 0) blocks += hits.external * weights.diskCacheHitWeight;
  }
  return blocks;
}

/** Tokens: `round(effective_overlap_blocks × block_size)`, at least 0 (halves round up, as Rust's `round` does for positives). */
export function cachedTokens(effectiveBlocks: number, blockSize: number): number {
  return Math.max(0, Math.round(effectiveBlocks * blockSize));
}

/** Tokens the rank would still have to prefill: `isl − min(cached, isl)` (§4.2). */
export function effectivePrefillTokens(isl: number, cached: number): number {
  return isl - Math.min(cached, isl);
}

/** The prompt's blocks, a partial last block counted: `ceil(isl / block_size)`. */
export function requestBlocks(isl: number, blockSize: number): number {
  return Math.ceil(isl / blockSize);
}

/** Blocks the rank would hold with this request admitted: `active + (len(S) − depth)` (§4.4). */
export function potentialDecodeBlocks(load: RankLoad): number {
  return load.activeDecodeBlocks + load.additionalActiveBlocks;
}

/**
 * `SelectResponse.potential_decode_blocks` (§4.4): the projection plus the prompt's blocks that
 * have no tracking hash (a partial tail block, or no hashes at all): `max(0, ceil(isl/bs) − len(S))`.
 */
export function potentialDecodeBlocksAfterAdmission(
  load: RankLoad,
  isl: number,
  blockSize: number,
  trackedBlocks: number,
): number {
  return potentialDecodeBlocks(load) + Math.max(0, requestBlocks(isl, blockSize) - trackedBlocks);
}

/**
 * `/potential_loads`' `potential_prefill_tokens` (§6): the rank's active prefill plus, when prefill
 * is tracked, what this prompt would add there (`isl − min(cached, isl)`; an uncached rank adds isl).
 */
export function potentialPrefillTokens(
  activePrefillTokens: number,
  isl: number,
  cached: number,
  trackPrefillTokens: boolean,
): number {
  return activePrefillTokens + (trackPrefillTokens ? effectivePrefillTokens(isl, cached) : 0);
}

/** What a rank's logit depends on beyond its own figures. */
export interface CostContext {
  /** Tokens of the prompt; > 0. */
  isl: number;
  /** Tokens per block. */
  blockSize: number;
  settings: SelectionSettings;
  /**
   * Tokens: the least active prefill among the eligible ranks, the floor the credit decay measures
   * from. Only read when prefill is tracked and the decay is on.
   */
  minActivePrefillTokens: number;
}

/**
 * `DefaultWorkerScorer::worker_logit` (§4.5), in blocks; lower is better. The prefill the rank
 * would carry (its active prefill plus the whole prompt) less the credit for what it has cached,
 * scaled, plus the decode blocks it would hold and a charge per active request. Only the
 * aggregated branch: the selection service never scores decode-role workers.
 */
export function workerLogit(hits: TierHits, load: RankLoad, context: CostContext): number {
  const { isl, blockSize, settings } = context;
  const track = settings.trackPrefillTokens;
  const cached = cachedTokens(effectiveOverlapBlocks(hits, settings), blockSize);
  // Dynamo's operation order, which exceeds `active + isl` only when cached > isl.
  const rawPrefillBlocks = track
    ? (load.activePrefillTokens + effectivePrefillTokens(isl, cached) + cached) / blockSize
    : 0;
  let decay = 1;
  if (track && settings.overlapScoreCreditDecay > 0) {
    const excessBlocks = Math.max(0, load.activePrefillTokens - context.minActivePrefillTokens) / blockSize;
    const normalized = excessBlocks / requestBlocks(isl, blockSize);
    decay = 1 / (1 + settings.overlapScoreCreditDecay * normalized);
  }
  // The device tier is always reported here, so Dynamo's fallback to the effective overlap when no
  // tier is reported never applies. The shared-cache term is 0: the HTTP service has no shared cache.
  const creditBlocks =
    settings.overlapScoreCredit * decay * hits.device +
    settings.hostCacheHitWeight * hits.hostPinned +
    settings.diskCacheHitWeight * (hits.disk + hits.external);
  return (
    settings.prefillLoadScale * Math.max(0, rawPrefillBlocks - creditBlocks) +
    potentialDecodeBlocks(load) +
    settings.decodeActiveRequestWeight * load.activeRequests
  );
}

/**
 * `RoutingConstraints::preferred_taint_multiplier`: `exp(−tanh(Σ weights of the preferred taints
 * the worker has))`, within [1/e, e], so equal and opposite preferences cancel; `undefined` when
 * the request prefers no taints. The weights are `f32` in Dynamo, hence `fround`.
 */
export function preferredTaintMultiplier(
  preferred: Readonly<Record<string, number>> | undefined,
  taints: readonly string[],
): number | undefined {
  if (preferred === undefined) return undefined;
  const names = Object.keys(preferred);
  if (names.length === 0) return undefined;
  const held = new Set(taints);
  let bias = 0;
  for (const name of names) if (held.has(name)) bias += Math.fround(preferred[name]!);
  return Math.exp(-Math.tanh(bias));
}
