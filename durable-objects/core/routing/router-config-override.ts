/**
 * The per-request `router_config_override` (reference selection §1.2, §4.7): Dynamo's
 * `RouterConfigOverrideSerde` read field by field, then `try_from` (the deprecated weight mapped
 * onto credit and scale) and `validate()`, with Dynamo's texts; and the settings one selection runs
 * with, the override over the config.
 *
 * Status for a failure: **422 recommended.** Dynamo raises these texts as serde `try_from` errors
 * inside axum's `Json` extractor, which answers a data error with 422 and a body that contains the
 * text ("Failed to deserialize the JSON body into the target type: …"); reference §11 marks the
 * status not confirmed, but nothing in Dynamo's path could make it 400. Clients that check the
 * error match on the text, so the route should keep it verbatim inside whatever framing it adds.
 */
import {
  applyDeprecatedOverlapScoreWeight,
  type KvRouterConfig,
  mustBeAtLeast,
  mustBeBetween,
  OVERLAP_SCORE_CREDIT_RANGE_ERROR,
} from "./router-config";

export interface RouterConfigOverride {
  overlapScoreCredit?: number;
  prefillLoadScale?: number;
  routerTemperature?: number;
  assumeKvReuse?: boolean;
  trackPrefillTokens?: boolean;
  sharedCacheMultiplier?: number;
}

export type OverrideParse =
  | { ok: true; value: RouterConfigOverride | undefined }
  | { ok: false; message: string };

const FLOAT_FIELDS = {
  overlap_score_credit: "overlapScoreCredit",
  prefill_load_scale: "prefillLoadScale",
  router_temperature: "routerTemperature",
  shared_cache_multiplier: "sharedCacheMultiplier",
} as const;
const BOOL_FIELDS = { assume_kv_reuse: "assumeKvReuse", track_prefill_tokens: "trackPrefillTokens" } as const;

/**
 * Reads `raw`, a JSON value as decoded (numbers as `number`, or `bigint` for integers beyond 2^53;
 * a fraction literal must reach here as a `number`). Absent or `null` is no override, as serde reads
 * a `null` `Option`. Unknown fields are ignored (no `deny_unknown_fields`). A field of the wrong
 * type fails with serde's wording (`invalid type: string "x", expected f64`), in the object's key
 * order as serde visits it; a number written `5.0` is reported as the integer 5, which serde would
 * call a floating point.
 */
export function parseRouterConfigOverride(raw: unknown): OverrideParse {
  if (raw === undefined || raw === null) return { ok: true, value: undefined };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    return failure(invalidType(raw, "struct RouterConfigOverrideSerde"));
  }
  const value: RouterConfigOverride = {};
  let weight: number | undefined;
  for (const [key, field] of Object.entries(raw)) {
    if (field === null || field === undefined) continue;
    if (key === "overlap_score_weight" || key in FLOAT_FIELDS) {
      const n = typeof field === "number" ? field : typeof field === "bigint" ? Number(field) : undefined;
      if (n === undefined) return failure(invalidType(field, "f64"));
      // serde_json refuses a literal beyond f64 before any field sees it.
      if (!Number.isFinite(n)) return failure("number out of range");
      if (key === "overlap_score_weight") weight = n;
      else value[FLOAT_FIELDS[key as keyof typeof FLOAT_FIELDS]] = n;
    } else if (key in BOOL_FIELDS) {
      if (typeof field !== "boolean") return failure(invalidType(field, "a boolean"));
      value[BOOL_FIELDS[key as keyof typeof BOOL_FIELDS]] = field;
    }
  }
  // `try_from`: after credit and scale are read, so the weight wins over an explicit scale.
  if (weight !== undefined) applyDeprecatedOverlapScoreWeight(value, weight);
  const problem = validateOverride(value);
  return problem === undefined ? { ok: true, value } : failure(problem);
}

/** `RouterConfigOverride::validate`, in its order: the first problem is the one reported. */
export function validateOverride(o: RouterConfigOverride): string | undefined {
  const credit = o.overlapScoreCredit;
  if (credit !== undefined && !(Number.isFinite(credit) && credit >= 0))
    return OVERLAP_SCORE_CREDIT_RANGE_ERROR;
  if (o.prefillLoadScale !== undefined && !(o.prefillLoadScale >= 0))
    return mustBeAtLeast("prefill_load_scale", 0);
  if (o.routerTemperature !== undefined && !(o.routerTemperature >= 0))
    return mustBeAtLeast("router_temperature", 0);
  const shared = o.sharedCacheMultiplier;
  if (shared !== undefined && !(shared >= 0 && shared <= 1))
    return mustBeBetween("shared_cache_multiplier", 0, 1);
  return undefined;
}

/** What one selection runs with: the request's override over the config (`selection_weights`). */
export interface SelectionSettings {
  overlapScoreCredit: number;
  /** Config only: the override has no decay. */
  overlapScoreCreditDecay: number;
  prefillLoadScale: number;
  /** Config only. */
  decodeActiveRequestWeight: number;
  /** Config only. */
  hostCacheHitWeight: number;
  /** Config only. */
  diskCacheHitWeight: number;
  sharedCacheMultiplier: number;
  routerTemperature: number;
  /** Whether the prompt's tracking hashes are its own or random ones: for the hasher, not the cost. */
  assumeKvReuse: boolean;
  /** The `/select` resolution of §4.8: override, else config. */
  trackPrefillTokens: boolean;
}

export function selectionSettings(
  config: Readonly<KvRouterConfig>,
  override: RouterConfigOverride | undefined,
): SelectionSettings {
  return {
    overlapScoreCredit: override?.overlapScoreCredit ?? config.overlapScoreCredit,
    overlapScoreCreditDecay: config.overlapScoreCreditDecay,
    prefillLoadScale: override?.prefillLoadScale ?? config.prefillLoadScale,
    decodeActiveRequestWeight: config.decodeActiveRequestWeight,
    hostCacheHitWeight: config.hostCacheHitWeight,
    diskCacheHitWeight: config.diskCacheHitWeight,
    sharedCacheMultiplier: override?.sharedCacheMultiplier ?? config.sharedCacheMultiplier,
    routerTemperature: override?.routerTemperature ?? config.routerTemperature,
    assumeKvReuse: override?.assumeKvReuse ?? config.routerAssumeKvReuse,
    trackPrefillTokens: override?.trackPrefillTokens ?? config.routerTrackPrefillTokens,
  };
}

/**
 * `track_prefill_tokens` of an explicit `/reservations` (§4.8): the request's field, else on when
 * the request carries `effective_prefill_tokens`, else the override's, else the config's.
 */
export function explicitReservationTracksPrefill(
  requestField: boolean | undefined,
  hasEffectivePrefillTokens: boolean,
  config: Readonly<KvRouterConfig>,
  override: RouterConfigOverride | undefined,
): boolean {
  return (
    requestField ??
    (hasEffectivePrefillTokens || (override?.trackPrefillTokens ?? config.routerTrackPrefillTokens))
  );
}

function failure(message: string): OverrideParse {
  return { ok: false, message };
}

/** serde's `invalid type: <unexpected>, expected <what>`. */
function invalidType(value: unknown, expected: string): string {
  return `invalid type: ${unexpected(value)}, expected ${expected}`;
}

/** serde's `Unexpected` display for a decoded JSON value. */
function unexpected(value: unknown): string {
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "bigint") return `integer \`${value}\``;
  if (typeof value === "number") {
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  }
  return Array.isArray(value) ? "sequence" : "map";
}
