import { describe, expect, it } from "vitest";
import { parseDynamoBool, parseRustF64 } from "../../durable-objects/core/routing/dynamo-env";
import { DEFAULT_KV_ROUTER_CONFIG } from "../../durable-objects/core/routing/router-config";
import {
  kvRouterConfigFromVars,
  type RouterVars,
} from "../../durable-objects/core/routing/router-config-vars";

/** `dynamo_truthy`'s own test spellings (crate `dynamo-truthy`). */
const TRUTHY = ["1", "true", "TRUE", "True", "on", "ON", "On", "yes", "YES", "Yes", " true ", "\tyes\n"];
const FALSEY = ["0", "false", "FALSE", "False", "off", "OFF", "Off", "no", "NO", "No", " false "];
const NEITHER = ["2", "enabled", "disabled", "maybe", "y", "n", "t", "f", "-1"];

function read(vars: RouterVars) {
  return kvRouterConfigFromVars(vars);
}

describe("the router config's defaults", () => {
  it("are Dynamo's KvRouterConfig::default()", () => {
    expect(DEFAULT_KV_ROUTER_CONFIG).toEqual({
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
  });

  it("are what no vars give, with nothing to warn about", () => {
    expect(read({})).toEqual({ config: DEFAULT_KV_ROUTER_CONFIG, warnings: [] });
  });
});

describe("numeric vars", () => {
  it("set each field under Dynamo's environment name", () => {
    const { config, warnings } = read({
      DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT: "2.5",
      DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY: "0.5",
      DYN_ROUTER_PREFILL_LOAD_SCALE: "3",
      DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT: "4",
      DYN_ROUTER_HOST_CACHE_HIT_WEIGHT: "0.5",
      DYN_ROUTER_DISK_CACHE_HIT_WEIGHT: "0.125",
      DYN_ROUTER_TEMPERATURE: "0.7",
      DYN_SHARED_CACHE_MULTIPLIER: "0.3",
      DYN_ROUTER_TTL_SECS: "30",
    });
    expect(warnings).toEqual([]);
    expect(config).toEqual({
      ...DEFAULT_KV_ROUTER_CONFIG,
      overlapScoreCredit: 2.5,
      overlapScoreCreditDecay: 0.5,
      prefillLoadScale: 3,
      decodeActiveRequestWeight: 4,
      hostCacheHitWeight: 0.5,
      diskCacheHitWeight: 0.125,
      routerTemperature: 0.7,
      sharedCacheMultiplier: 0.3,
      routerTtlSecs: 30,
    });
  });

  it("accept what Rust's f64 parse accepts", () => {
    for (const [raw, value] of [
      ["1.", 1],
      [".5", 0.5],
      ["+2", 2],
      ["1e-1", 0.1],
      ["2E1", 20],
      ["0", 0],
    ] as const) {
      expect(read({ DYN_ROUTER_TEMPERATURE: raw }).config.routerTemperature, raw).toBe(value);
      expect(parseRustF64(raw)).toBe(value);
    }
  });

  it("keep the default and warn once for a value Rust cannot parse", () => {
    for (const raw of [" 1", "1 ", "1,5", "0x10", "1_000", "abc", ".", "e5", "--1"]) {
      expect(parseRustF64(raw), raw).toBeUndefined();
      const { config, warnings } = read({ DYN_ROUTER_PREFILL_LOAD_SCALE: raw });
      expect(config.prefillLoadScale).toBe(1);
      expect(warnings).toEqual([
        `DYN_ROUTER_PREFILL_LOAD_SCALE=${JSON.stringify(raw)} ignored (not a number); keeping 1`,
      ]);
    }
  });

  it("refuse inf and NaN, which Rust parses but would turn costs into NaN", () => {
    expect(parseRustF64("inf")).toBe(Infinity);
    expect(parseRustF64("-Infinity")).toBe(-Infinity);
    expect(parseRustF64("NaN")).toBeNaN();
    for (const raw of ["inf", "Infinity", "NaN"]) {
      const { config, warnings } = read({ DYN_ROUTER_TEMPERATURE: raw });
      expect(config.routerTemperature).toBe(0);
      expect(warnings).toEqual([
        `DYN_ROUTER_TEMPERATURE=${JSON.stringify(raw)} ignored (not finite); keeping 0`,
      ]);
    }
  });

  it("refuse a value outside Dynamo's range, naming Dynamo's validation text", () => {
    const cases: Array<[RouterVars, string]> = [
      [
        { DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT: "-1" },
        "overlap_score_credit must be a finite, non-negative number",
      ],
      [
        { DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY: "-0.5" },
        "overlap_score_credit_decay must be greater than or equal to 0",
      ],
      [{ DYN_ROUTER_PREFILL_LOAD_SCALE: "-2" }, "prefill_load_scale must be greater than or equal to 0"],
      [
        { DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT: "-1" },
        "decode_active_request_weight must be greater than or equal to 0",
      ],
      [{ DYN_ROUTER_TEMPERATURE: "-0.1" }, "router_temperature must be greater than or equal to 0"],
      [{ DYN_ROUTER_TTL_SECS: "-5" }, "router_ttl_secs must be greater than or equal to 0"],
      [{ DYN_ROUTER_HOST_CACHE_HIT_WEIGHT: "1.5" }, "host_cache_hit_weight must be between 0 and 1"],
      [{ DYN_ROUTER_DISK_CACHE_HIT_WEIGHT: "-0.25" }, "disk_cache_hit_weight must be between 0 and 1"],
      [{ DYN_SHARED_CACHE_MULTIPLIER: "2" }, "shared_cache_multiplier must be between 0 and 1"],
    ];
    for (const [vars, text] of cases) {
      const { config, warnings } = read(vars);
      expect(config, text).toEqual(DEFAULT_KV_ROUTER_CONFIG);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`(${text})`);
    }
  });

  it("treat an empty or blank value as unset", () => {
    expect(read({ DYN_ROUTER_TEMPERATURE: "", DYN_ROUTER_TTL_SECS: "  " })).toEqual({
      config: DEFAULT_KV_ROUTER_CONFIG,
      warnings: [],
    });
  });

  it("read a typed wrangler.toml value as its string form", () => {
    const { config, warnings } = read({
      DYN_ROUTER_TEMPERATURE: 0.5,
      DYN_ROUTER_TRACK_PREFILL_TOKENS: false,
    });
    expect(warnings).toEqual([]);
    expect(config.routerTemperature).toBe(0.5);
    expect(config.routerTrackPrefillTokens).toBe(false);
    expect(read({ DYN_ROUTER_TEMPERATURE: { x: 1 } }).warnings).toEqual([
      "DYN_ROUTER_TEMPERATURE ignored (not a string)",
    ]);
  });
});

describe("boolean vars", () => {
  it("take dynamo_truthy's spellings, trimmed and in any case", () => {
    for (const raw of TRUTHY) expect(parseDynamoBool(raw), JSON.stringify(raw)).toBe(true);
    for (const raw of FALSEY) expect(parseDynamoBool(raw), JSON.stringify(raw)).toBe(false);
    for (const raw of [...NEITHER, "", "  "])
      expect(parseDynamoBool(raw), JSON.stringify(raw)).toBeUndefined();
  });

  it("set assume_kv_reuse and track_prefill_tokens either way", () => {
    for (const raw of FALSEY) {
      const { config } = read({ DYN_ROUTER_ASSUME_KV_REUSE: raw, DYN_ROUTER_TRACK_PREFILL_TOKENS: raw });
      expect([config.routerAssumeKvReuse, config.routerTrackPrefillTokens], JSON.stringify(raw)).toEqual([
        false,
        false,
      ]);
    }
    for (const raw of TRUTHY) {
      const { config } = read({ DYN_ROUTER_ASSUME_KV_REUSE: raw, DYN_ROUTER_TRACK_PREFILL_TOKENS: raw });
      expect([config.routerAssumeKvReuse, config.routerTrackPrefillTokens]).toEqual([true, true]);
    }
  });

  it("keep the default for an unrecognised spelling, and warn", () => {
    for (const raw of NEITHER) {
      const { config, warnings } = read({ DYN_ROUTER_ASSUME_KV_REUSE: raw });
      expect(config.routerAssumeKvReuse).toBe(true);
      expect(warnings).toEqual([
        `DYN_ROUTER_ASSUME_KV_REUSE=${JSON.stringify(raw)} ignored (not a boolean: 1/0, true/false, on/off, yes/no); keeping true`,
      ]);
    }
  });
});

describe("the deprecated overlap_score_weight vars", () => {
  it("set the prefill scale, over DYN_ROUTER_PREFILL_LOAD_SCALE, and leave a non-zero credit alone", () => {
    const { config, warnings } = read({
      DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT: "3",
      DYN_ROUTER_PREFILL_LOAD_SCALE: "5",
      DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT: "2",
    });
    expect([config.prefillLoadScale, config.overlapScoreCredit]).toEqual([2, 3]);
    expect(warnings).toEqual([
      "DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT is deprecated; use DYN_ROUTER_PREFILL_LOAD_SCALE",
    ]);
  });

  it("zero the credit too when the weight is 0", () => {
    const { config } = read({ DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT: "3", DYN_OVERLAP_SCORE_WEIGHT: "0" });
    expect([config.prefillLoadScale, config.overlapScoreCredit]).toEqual([0, 0]);
  });

  it("take the first name that parses, DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT before DYN_OVERLAP_SCORE_WEIGHT", () => {
    expect(
      read({ DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT: "2", DYN_OVERLAP_SCORE_WEIGHT: "4" }).config
        .prefillLoadScale,
    ).toBe(2);
    const fallThrough = read({ DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT: "two", DYN_OVERLAP_SCORE_WEIGHT: "4" });
    expect(fallThrough.config.prefillLoadScale).toBe(4);
    expect(fallThrough.warnings[0]).toContain(
      'DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT="two" ignored (not a number)',
    );
  });

  it("refuse a negative weight as a negative scale", () => {
    const { config, warnings } = read({
      DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT: "-1",
      DYN_OVERLAP_SCORE_WEIGHT: "4",
    });
    expect(config.prefillLoadScale).toBe(1);
    expect(warnings).toEqual([
      'DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT="-1" ignored (prefill_load_scale must be greater than or equal to 0); keeping prefill_load_scale 1',
    ]);
  });
});

describe("the shared cache vars", () => {
  it("default the multiplier to 0.5 when a cache type is set and the multiplier is not", () => {
    expect(read({ DYN_SHARED_CACHE_TYPE: "hicache" }).config).toMatchObject({
      sharedCacheType: "hicache",
      sharedCacheMultiplier: 0.5,
    });
    expect(
      read({ DYN_SHARED_CACHE_TYPE: "hicache", DYN_SHARED_CACHE_MULTIPLIER: "0.2" }).config
        .sharedCacheMultiplier,
    ).toBe(0.2);
    expect(read({ DYN_SHARED_CACHE_TYPE: "none" }).config.sharedCacheMultiplier).toBe(0);
  });

  it("keep 'none' for a type Dynamo does not know (its names are lowercase)", () => {
    const { config, warnings } = read({ DYN_SHARED_CACHE_TYPE: "HiCache" });
    expect([config.sharedCacheType, config.sharedCacheMultiplier]).toEqual(["none", 0]);
    expect(warnings).toEqual([
      `DYN_SHARED_CACHE_TYPE="HiCache" ignored (expected 'none' or 'hicache'); keeping none`,
    ]);
  });
});
