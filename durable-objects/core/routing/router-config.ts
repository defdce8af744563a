/**
 * Dynamo's `KvRouterConfig` (reference selection §4.6): the knobs of the selection service's cost,
 * with Dynamo's defaults and validation texts. `router-config-vars.ts` reads it from wrangler vars;
 * `router-config-override.ts` is the per-request `router_config_override` on top of it.
 */

export type SharedCacheType = "none" | "hicache";

export interface KvRouterConfig {
  /** Multiplier on a rank's device-tier overlap blocks, credited against its prefill (finite, ≥ 0). */
  overlapScoreCredit: number;
  /** How fast that credit decays as a rank's active prefill exceeds the least loaded rank's (≥ 0; 0 = off). */
  overlapScoreCreditDecay: number;
  /** Scale on the prefill blocks left after the credit (≥ 0). */
  prefillLoadScale: number;
  /** Blocks charged per active request on a rank (≥ 0). */
  decodeActiveRequestWeight: number;
  /** Credit per host-pinned (CPU) tier block, and weight in cached tokens ([0, 1]). */
  hostCacheHitWeight: number;
  /** Credit per disk or external tier block, and weight in cached tokens ([0, 1]). */
  diskCacheHitWeight: number;
  /** Softmax temperature of the choice (≥ 0; 0 = lowest cost, ties broken at random). */
  routerTemperature: number;
  /** Whether tracking hashes are the prompt's own (true) or random per request (no reuse assumed). */
  routerAssumeKvReuse: boolean;
  /** Whether prompt-side prefill tokens count in the cost and in bookings. */
  routerTrackPrefillTokens: boolean;
  /** Credit per shared-cache block beyond the device prefix ([0, 1]); the HTTP service has no shared cache. */
  sharedCacheMultiplier: number;
  sharedCacheType: SharedCacheType;
  /** Seconds a booked prompt's blocks stay in the approximate index (≥ 0). */
  routerTtlSecs: number;
}

/** `KvRouterConfig::default()`. */
export const DEFAULT_KV_ROUTER_CONFIG: Readonly<KvRouterConfig> = Object.freeze({
  overlapScoreCredit: 1,
  overlapScoreCreditDecay: 0,
  prefillLoadScale: 1,
  decodeActiveRequestWeight: 0,
  hostCacheHitWeight: 0.75,
  diskCacheHitWeight: 0.25,
  routerTemperature: 0,
  routerAssumeKvReuse: true,
  routerTrackPrefillTokens: true,
  sharedCacheMultiplier: 0,
  sharedCacheType: "none",
  routerTtlSecs: 120,
});

/** Dynamo's validation texts (`validate_overlap_score_credit`, `validate_min`, `validate_range`). */
export const OVERLAP_SCORE_CREDIT_RANGE_ERROR = "overlap_score_credit must be a finite, non-negative number";
export const mustBeAtLeast = (field: string, min: number) =>
  `${field} must be greater than or equal to ${min}`;
export const mustBeBetween = (field: string, min: number, max: number) =>
  `${field} must be between ${min} and ${max}`;

/** A finite value's problem under Dynamo's `validate()`, or `undefined` when it is in range. */
export type Check = (value: number) => string | undefined;
export const atLeastZero =
  (field: string): Check =>
  (v) =>
    v >= 0 ? undefined : mustBeAtLeast(field, 0);
export const zeroToOne =
  (field: string): Check =>
  (v) =>
    v >= 0 && v <= 1 ? undefined : mustBeBetween(field, 0, 1);

/**
 * `apply_deprecated_overlap_score_weight_override`: the old weight was the prefill scale, and a
 * weight of 0 also meant "ignore overlap", so it zeroes the credit too; any other weight leaves the
 * credit alone.
 */
export function applyDeprecatedOverlapScoreWeight(
  target: { overlapScoreCredit?: number; prefillLoadScale?: number },
  weight: number,
): void {
  target.prefillLoadScale = weight;
  if (weight === 0) target.overlapScoreCredit = 0;
}
