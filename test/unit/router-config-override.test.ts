import { describe, expect, it } from "vitest";
import { DEFAULT_KV_ROUTER_CONFIG } from "../../durable-objects/core/routing/router-config";
import {
  explicitReservationTracksPrefill,
  parseRouterConfigOverride,
  selectionSettings,
} from "../../durable-objects/core/routing/router-config-override";

const parse = parseRouterConfigOverride;

describe("router_config_override", () => {
  it("is absent when missing or null, as serde reads a null Option", () => {
    expect(parse(undefined)).toEqual({ ok: true, value: undefined });
    expect(parse(null)).toEqual({ ok: true, value: undefined });
  });

  it("reads every field and ignores unknown ones and nulls", () => {
    expect(
      parse({
        overlap_score_credit: 0.5,
        prefill_load_scale: 2,
        router_temperature: 0.3,
        assume_kv_reuse: false,
        track_prefill_tokens: false,
        shared_cache_multiplier: 0.25,
        tenant_id: "acme",
        router_temperature_typo: "x",
        overlap_score_credit_decay: 1,
      }),
    ).toEqual({
      ok: true,
      value: {
        overlapScoreCredit: 0.5,
        prefillLoadScale: 2,
        routerTemperature: 0.3,
        assumeKvReuse: false,
        trackPrefillTokens: false,
        sharedCacheMultiplier: 0.25,
      },
    });
    expect(parse({ router_temperature: null })).toEqual({ ok: true, value: {} });
  });

  it("takes an integer beyond 2^53 as the float it is", () => {
    expect(parse({ prefill_load_scale: 2n ** 60n })).toEqual({
      ok: true,
      value: { prefillLoadScale: 2 ** 60 },
    });
  });
});

describe("the deprecated overlap_score_weight in an override", () => {
  it("sets the prefill scale, winning over an explicit prefill_load_scale, and leaves the credit", () => {
    expect(parse({ overlap_score_weight: 2, prefill_load_scale: 5, overlap_score_credit: 0.5 })).toEqual({
      ok: true,
      value: { prefillLoadScale: 2, overlapScoreCredit: 0.5 },
    });
    expect(parse({ overlap_score_weight: 3 })).toEqual({ ok: true, value: { prefillLoadScale: 3 } });
  });

  it("also zeroes the credit when 0, over an explicit credit", () => {
    expect(parse({ overlap_score_weight: 0, overlap_score_credit: 3 })).toEqual({
      ok: true,
      value: { prefillLoadScale: 0, overlapScoreCredit: 0 },
    });
  });

  it("is validated as the scale it became", () => {
    expect(parse({ overlap_score_weight: -1 })).toEqual({
      ok: false,
      message: "prefill_load_scale must be greater than or equal to 0",
    });
  });
});

describe("override validation", () => {
  it("answers each of Dynamo's texts", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ overlap_score_credit: -0.5 }, "overlap_score_credit must be a finite, non-negative number"],
      [{ prefill_load_scale: -1 }, "prefill_load_scale must be greater than or equal to 0"],
      [{ router_temperature: -0.1 }, "router_temperature must be greater than or equal to 0"],
      [{ shared_cache_multiplier: 1.5 }, "shared_cache_multiplier must be between 0 and 1"],
      [{ shared_cache_multiplier: -0.1 }, "shared_cache_multiplier must be between 0 and 1"],
    ];
    for (const [override, message] of cases) expect(parse(override), message).toEqual({ ok: false, message });
  });

  it("accepts the bounds themselves", () => {
    expect(
      parse({
        overlap_score_credit: 0,
        prefill_load_scale: 0,
        router_temperature: 0,
        shared_cache_multiplier: 1,
      }).ok,
    ).toBe(true);
    expect(parse({ shared_cache_multiplier: 0 }).ok).toBe(true);
  });

  it("reports the first problem in validate()'s order, whatever the key order", () => {
    expect(parse({ shared_cache_multiplier: 9, router_temperature: -1, overlap_score_credit: -1 })).toEqual({
      ok: false,
      message: "overlap_score_credit must be a finite, non-negative number",
    });
    expect(parse({ shared_cache_multiplier: 9, router_temperature: -1 })).toEqual({
      ok: false,
      message: "router_temperature must be greater than or equal to 0",
    });
  });

  it("refuses a mistyped field with serde's wording", () => {
    const cases: Array<[unknown, string]> = [
      [{ overlap_score_credit: "1" }, 'invalid type: string "1", expected f64'],
      [{ router_temperature: true }, "invalid type: boolean `true`, expected f64"],
      [{ prefill_load_scale: [1] }, "invalid type: sequence, expected f64"],
      [{ overlap_score_weight: {} }, "invalid type: map, expected f64"],
      [{ assume_kv_reuse: 1 }, "invalid type: integer `1`, expected a boolean"],
      [{ track_prefill_tokens: 0.5 }, "invalid type: floating point `0.5`, expected a boolean"],
      [{ track_prefill_tokens: "true" }, 'invalid type: string "true", expected a boolean'],
      ["fast", 'invalid type: string "fast", expected struct RouterConfigOverrideSerde'],
      [[], "invalid type: sequence, expected struct RouterConfigOverrideSerde"],
      [{ router_temperature: Infinity }, "number out of range"],
    ];
    for (const [override, message] of cases) expect(parse(override), message).toEqual({ ok: false, message });
  });
});

describe("the settings a selection runs with", () => {
  it("are the config's without an override", () => {
    expect(selectionSettings(DEFAULT_KV_ROUTER_CONFIG, undefined)).toEqual({
      overlapScoreCredit: 1,
      overlapScoreCreditDecay: 0,
      prefillLoadScale: 1,
      decodeActiveRequestWeight: 0,
      hostCacheHitWeight: 0.75,
      diskCacheHitWeight: 0.25,
      sharedCacheMultiplier: 0,
      routerTemperature: 0,
      assumeKvReuse: true,
      trackPrefillTokens: true,
    });
  });

  it("take each override field over the config, and the config for what an override cannot set", () => {
    const config = { ...DEFAULT_KV_ROUTER_CONFIG, overlapScoreCreditDecay: 2, hostCacheHitWeight: 0.5 };
    const parsed = parse({
      overlap_score_credit: 0,
      prefill_load_scale: 3,
      router_temperature: 0.4,
      assume_kv_reuse: false,
      track_prefill_tokens: false,
      shared_cache_multiplier: 0.5,
    });
    if (!parsed.ok) throw new Error(parsed.message);
    expect(selectionSettings(config, parsed.value)).toEqual({
      overlapScoreCredit: 0,
      overlapScoreCreditDecay: 2,
      prefillLoadScale: 3,
      decodeActiveRequestWeight: 0,
      hostCacheHitWeight: 0.5,
      diskCacheHitWeight: 0.25,
      sharedCacheMultiplier: 0.5,
      routerTemperature: 0.4,
      assumeKvReuse: false,
      trackPrefillTokens: false,
    });
  });

  it("record assume_kv_reuse for the hasher from the override, else the config", () => {
    const reuseOff = { ...DEFAULT_KV_ROUTER_CONFIG, routerAssumeKvReuse: false };
    expect(selectionSettings(reuseOff, undefined).assumeKvReuse).toBe(false);
    expect(selectionSettings(reuseOff, { assumeKvReuse: true }).assumeKvReuse).toBe(true);
    expect(selectionSettings(DEFAULT_KV_ROUTER_CONFIG, { assumeKvReuse: false }).assumeKvReuse).toBe(false);
  });
});

describe("track_prefill_tokens of an explicit reservation", () => {
  const off = { ...DEFAULT_KV_ROUTER_CONFIG, routerTrackPrefillTokens: false };

  it("is the request's field when given", () => {
    expect(
      explicitReservationTracksPrefill(false, true, DEFAULT_KV_ROUTER_CONFIG, { trackPrefillTokens: true }),
    ).toBe(false);
    expect(explicitReservationTracksPrefill(true, false, off, { trackPrefillTokens: false })).toBe(true);
  });

  it("is on when the request carries effective_prefill_tokens", () => {
    expect(explicitReservationTracksPrefill(undefined, true, off, { trackPrefillTokens: false })).toBe(true);
  });

  it("is otherwise the override's, else the config's", () => {
    expect(explicitReservationTracksPrefill(undefined, false, off, { trackPrefillTokens: true })).toBe(true);
    expect(
      explicitReservationTracksPrefill(undefined, false, DEFAULT_KV_ROUTER_CONFIG, {
        trackPrefillTokens: false,
      }),
    ).toBe(false);
    expect(explicitReservationTracksPrefill(undefined, false, off, undefined)).toBe(false);
    expect(explicitReservationTracksPrefill(undefined, false, DEFAULT_KV_ROUTER_CONFIG, undefined)).toBe(
      true,
    );
  });
});
