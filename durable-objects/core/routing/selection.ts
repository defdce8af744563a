/**
 * Dynamo's worker selector (reference §7, `DefaultWorkerSelector`): the KV cost of a rank, and the
 * choice among ranks by cost (minimum or softmax), round robin or uniform random. Pure: the caller
 * passes the randomness.
 */
import type { RouterMode } from "../../types";
import { drawIndex, type Rng } from "./rng";

/** A rank's figures as `/potential_loads` reports them. */
export interface CandidateLoad {
  potentialPrefillTokens: number;
  potentialDecodeBlocks: number;
}

export interface KvCostOptions {
  overlapScoreWeight: number;
  blockSize: number;
  /**
   * Whether decode blocks count. Off for the prefill hop, as Dynamo turns `router_track_active_blocks`
   * off there: a prefill worker only computes the prompt, and charging it the blocks that decode
   * will hold would count that load twice.
   */
  countDecodeBlocks: boolean;
}

/** `logit = overlap_score_weight × potential_prefill_tokens / block_size + potential_decode_blocks`; lower is better. */
export function kvLogit(load: CandidateLoad, options: KvCostOptions): number {
  const prefillBlocks = load.potentialPrefillTokens / options.blockSize;
  return (
    options.overlapScoreWeight * prefillBlocks + (options.countDecodeBlocks ? load.potentialDecodeBlocks : 0)
  );
}

/**
 * The index of a minimum logit. Equal minima are chosen uniformly by reservoir sampling (the k-th
 * tie replaces the pick with probability 1/k), as newer Dynamo does: a fixed tie-break (say, the
 * lowest worker id) would send every concurrent request for an idle fleet to the same worker.
 */
export function pickMinimum(logits: ArrayLike<number>, rng: Rng): number {
  let best = 0;
  let ties = 1;
  for (let i = 1; i < logits.length; i++) {
    const logit = logits[i]!;
    const min = logits[best]!;
    if (logit < min) {
      best = i;
      ties = 1;
    } else if (logit === min) {
      ties++;
      if (rng() * ties < 1) best = i;
    }
  }
  return best;
}

/**
 * The range-normalised softmax over negated logits: `p_i ∝ exp(−(l_i − l_min) / ((l_max − l_min) × T))`,
 * uniform when every logit is equal. Normalising by the range makes `T` scale-free: at `T = 1` the
 * best rank is e times as likely as the worst, whatever the units of the cost.
 */
export function softmaxProbabilities(logits: ArrayLike<number>, temperature: number): Float64Array {
  const n = logits.length;
  const p = new Float64Array(n);
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    min = Math.min(min, logits[i]!);
    max = Math.max(max, logits[i]!);
  }
  if (max === min) return p.fill(1 / n);
  const scale = (max - min) * temperature;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const weight = Math.exp(-(logits[i]! - min) / scale);
    p[i] = weight;
    sum += weight;
  }
  for (let i = 0; i < n; i++) p[i] = p[i]! / sum;
  return p;
}

/** One draw from the softmax over `logits` (temperature > 0), by the cumulative sum. */
export function pickSoftmax(logits: ArrayLike<number>, temperature: number, rng: Rng): number {
  const p = softmaxProbabilities(logits, temperature);
  let u = rng();
  let last = 0;
  for (let i = 0; i < p.length; i++) {
    if (p[i]! === 0) continue;
    last = i;
    u -= p[i]!;
    if (u < 0) return i;
  }
  // The probabilities may sum to a hair under 1.
  return last;
}

/**
 * The index chosen among `logits.length` candidates (in (worker_id, dp_rank) order) by `mode`.
 * `turn` is the round-robin position, counted by the caller per worker set.
 */
export function chooseIndex(
  mode: RouterMode,
  logits: ArrayLike<number>,
  temperature: number,
  rng: Rng,
  turn: number,
): number {
  switch (mode) {
    case "round_robin":
      return turn % logits.length;
    case "random":
      return drawIndex(rng, logits.length);
    case "kv":
      return temperature > 0 ? pickSoftmax(logits, temperature, rng) : pickMinimum(logits, rng);
  }
}
