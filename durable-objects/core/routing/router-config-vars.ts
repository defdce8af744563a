/**
 * `KvRouterConfig` from wrangler vars under Dynamo's environment names
 * (`kv_router_config_from_lookup`, reference selection §4.6), so a deployment configured for Dynamo
 * reads the same here.
 *
 * A bad value never stops the Worker. Dynamo drops a number it cannot parse (keeping the default)
 * and would refuse to start on one its `validate()` rejects; a Worker that refused its config would
 * fail every request instead, so here a value that does not parse, is not finite or is out of
 * Dynamo's range keeps the default and comes back as a warning for the Worker to log once.
 * Non-finite values are refused even where Dynamo's range check lets them through (`inf` for the
 * scale or temperature), since they turn costs into NaN. An empty value counts as unset, as
 * `dynamo_truthy` treats it for booleans; an unrecognised boolean keeps the default, as there, and
 * is also warned about.
 */
import { parseDynamoBool, parseRustF64 } from "./dynamo-env";
import {
  applyDeprecatedOverlapScoreWeight,
  atLeastZero,
  type Check,
  DEFAULT_KV_ROUTER_CONFIG,
  type KvRouterConfig,
  OVERLAP_SCORE_CREDIT_RANGE_ERROR,
  zeroToOne,
} from "./router-config";

/** The multiplier Dynamo uses when a shared cache type is set and the multiplier is not. */
const SHARED_CACHE_MULTIPLIER_WHEN_ENABLED = 0.5;

/** The deprecated weight's names, in Dynamo's order: the first that parses is used. */
const DEPRECATED_WEIGHT_VARS = ["DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT", "DYN_OVERLAP_SCORE_WEIGHT"] as const;

type NumberField = {
  [K in keyof KvRouterConfig]: KvRouterConfig[K] extends number ? K : never;
}[keyof KvRouterConfig];
type BoolField = {
  [K in keyof KvRouterConfig]: KvRouterConfig[K] extends boolean ? K : never;
}[keyof KvRouterConfig];

/** The numeric vars read before the deprecated weight, in Dynamo's order. */
const LEADING_NUMBERS: ReadonlyArray<readonly [RouterVarName, NumberField, Check]> = [
  [
    "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT",
    "overlapScoreCredit",
    (v) => (v >= 0 ? undefined : OVERLAP_SCORE_CREDIT_RANGE_ERROR),
  ],
  [
    "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY",
    "overlapScoreCreditDecay",
    atLeastZero("overlap_score_credit_decay"),
  ],
  ["DYN_ROUTER_PREFILL_LOAD_SCALE", "prefillLoadScale", atLeastZero("prefill_load_scale")],
  [
    "DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT",
    "decodeActiveRequestWeight",
    atLeastZero("decode_active_request_weight"),
  ],
];

const TRAILING_NUMBERS: ReadonlyArray<readonly [RouterVarName, NumberField, Check]> = [
  ["DYN_ROUTER_TEMPERATURE", "routerTemperature", atLeastZero("router_temperature")],
  ["DYN_ROUTER_TTL_SECS", "routerTtlSecs", atLeastZero("router_ttl_secs")],
];

const BOOLEANS: ReadonlyArray<readonly [RouterVarName, BoolField]> = [
  ["DYN_ROUTER_ASSUME_KV_REUSE", "routerAssumeKvReuse"],
  ["DYN_ROUTER_TRACK_PREFILL_TOKENS", "routerTrackPrefillTokens"],
];

const CACHE_WEIGHTS: ReadonlyArray<readonly [RouterVarName, NumberField, Check]> = [
  ["DYN_ROUTER_HOST_CACHE_HIT_WEIGHT", "hostCacheHitWeight", zeroToOne("host_cache_hit_weight")],
  ["DYN_ROUTER_DISK_CACHE_HIT_WEIGHT", "diskCacheHitWeight", zeroToOne("disk_cache_hit_weight")],
];

export type RouterVarName =
  | "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT"
  | "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY"
  | "DYN_ROUTER_PREFILL_LOAD_SCALE"
  | "DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT"
  | (typeof DEPRECATED_WEIGHT_VARS)[number]
  | "DYN_ROUTER_TEMPERATURE"
  | "DYN_ROUTER_ASSUME_KV_REUSE"
  | "DYN_ROUTER_TRACK_PREFILL_TOKENS"
  | "DYN_ROUTER_TTL_SECS"
  | "DYN_SHARED_CACHE_MULTIPLIER"
  | "DYN_SHARED_CACHE_TYPE"
  | "DYN_ROUTER_HOST_CACHE_HIT_WEIGHT"
  | "DYN_ROUTER_DISK_CACHE_HIT_WEIGHT";

/**
 * The wrangler vars this module reads. Values are strings as Dynamo's are; a number or boolean
 * (a typed `[vars]` entry in wrangler.toml) is read as its string form.
 */
export type RouterVars = Partial<Record<RouterVarName, unknown>>;

export interface RouterConfigFromVars {
  config: KvRouterConfig;
  /** One line per var that was ignored or is deprecated, for the Worker to log once. */
  warnings: string[];
}

/** `kv_router_config_from_lookup` over wrangler vars, with bad values kept at the default (see above). */
export function kvRouterConfigFromVars(vars: RouterVars): RouterConfigFromVars {
  const config: KvRouterConfig = { ...DEFAULT_KV_ROUTER_CONFIG };
  const warnings: string[] = [];
  const ignore = (key: string, raw: string, why: string, kept: unknown) =>
    warnings.push(`${key}=${JSON.stringify(raw)} ignored (${why}); keeping ${kept}`);
  const readText = (key: RouterVarName): string | undefined => {
    const value = vars[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "string") return value.trim() === "" ? undefined : value;
    if (typeof value === "number" || typeof value === "boolean") return String(value);
    warnings.push(`${key} ignored (not a string)`);
    return undefined;
  };
  /** The var's accepted value, or `undefined` (unset, or ignored with a warning). */
  const readNumber = (key: RouterVarName, check: Check, kept: number): number | undefined => {
    const raw = readText(key);
    if (raw === undefined) return undefined;
    const judged = judgeNumber(raw, check);
    if (typeof judged === "number") return judged;
    ignore(key, raw, judged.problem, kept);
    return undefined;
  };
  const applyNumbers = (specs: ReadonlyArray<readonly [RouterVarName, NumberField, Check]>) => {
    for (const [key, field, check] of specs) {
      const value = readNumber(key, check, config[field]);
      if (value !== undefined) config[field] = value;
    }
  };

  applyNumbers(LEADING_NUMBERS);
  // After credit and scale, so the deprecated weight overrides DYN_ROUTER_PREFILL_LOAD_SCALE (§4.7).
  for (const key of DEPRECATED_WEIGHT_VARS) {
    const raw = readText(key);
    if (raw === undefined) continue;
    const judged = judgeNumber(raw, atLeastZero("prefill_load_scale"));
    // Like Dynamo's loop, a value that does not parse falls through to the next name.
    if (typeof judged !== "number" && judged.parsed === false) {
      ignore(key, raw, judged.problem, "the next weight var, if any");
      continue;
    }
    if (typeof judged === "number") {
      warnings.push(`${key} is deprecated; use DYN_ROUTER_PREFILL_LOAD_SCALE`);
      applyDeprecatedOverlapScoreWeight(config, judged);
    } else {
      ignore(key, raw, judged.problem, `prefill_load_scale ${config.prefillLoadScale}`);
    }
    break;
  }
  applyNumbers(TRAILING_NUMBERS);
  for (const [key, field] of BOOLEANS) {
    const raw = readText(key);
    if (raw === undefined) continue;
    const value = parseDynamoBool(raw);
    if (value === undefined)
      ignore(key, raw, "not a boolean: 1/0, true/false, on/off, yes/no", config[field]);
    else config[field] = value;
  }
  const multiplier = readNumber(
    "DYN_SHARED_CACHE_MULTIPLIER",
    zeroToOne("shared_cache_multiplier"),
    config.sharedCacheMultiplier,
  );
  if (multiplier !== undefined) config.sharedCacheMultiplier = multiplier;
  const cacheType = readText("DYN_SHARED_CACHE_TYPE");
  if (cacheType === "none" || cacheType === "hicache") config.sharedCacheType = cacheType;
  else if (cacheType !== undefined)
    ignore("DYN_SHARED_CACHE_TYPE", cacheType, "expected 'none' or 'hicache'", "none");
  if (config.sharedCacheType !== "none" && multiplier === undefined) {
    config.sharedCacheMultiplier = SHARED_CACHE_MULTIPLIER_WHEN_ENABLED;
  }
  applyNumbers(CACHE_WEIGHTS);
  return { config, warnings };
}

/** A var's number if Rust parses it, it is finite and `check` passes; else why not. */
function judgeNumber(raw: string, check: Check): number | { parsed: boolean; problem: string } {
  const value = parseRustF64(raw);
  if (value === undefined) return { parsed: false, problem: "not a number" };
  const problem = Number.isFinite(value) ? check(value) : "not finite";
  return problem === undefined ? value : { parsed: true, problem };
}
