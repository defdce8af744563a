import { describe, expect, it } from "vitest";
import {
  type CandidateRank,
  rankFigures,
  selectRank,
} from "../../durable-objects/core/routing/dynamo-choice";
import {
  cachedTokens,
  effectiveOverlapBlocks,
  effectivePrefillTokens,
  NO_HITS,
  potentialDecodeBlocksAfterAdmission,
  potentialPrefillTokens,
  preferredTaintMultiplier,
  type RankLoad,
  type TierHits,
  workerLogit,
} from "../../durable-objects/core/routing/dynamo-cost";
import { overlapSummary } from "../../durable-objects/core/routing/dynamo-overlap";
import { seededRng } from "../../durable-objects/core/routing/rng";
import {
  DEFAULT_KV_ROUTER_CONFIG,
  type KvRouterConfig,
} from "../../durable-objects/core/routing/router-config";
import {
  parseRouterConfigOverride,
  type SelectionSettings,
  selectionSettings,
} from "../../durable-objects/core/routing/router-config-override";

const IDLE: RankLoad = {
  activePrefillTokens: 0,
  activeDecodeBlocks: 0,
  additionalActiveBlocks: 0,
  activeRequests: 0,
};

/** The settings of a request with `override` (wire form) over `config`. */
function settingsWith(override?: Record<string, unknown>, config: KvRouterConfig = DEFAULT_KV_ROUTER_CONFIG) {
  const parsed = parseRouterConfigOverride(override);
  if (!parsed.ok) throw new Error(parsed.message);
  return selectionSettings(config, parsed.value);
}

function hits(partial: Partial<TierHits>): TierHits {
  return { ...NO_HITS, ...partial };
}

function logit(
  h: Partial<TierHits>,
  load: Partial<RankLoad>,
  isl: number,
  blockSize: number,
  s: SelectionSettings,
) {
  return workerLogit(
    hits(h),
    { ...IDLE, ...load },
    { isl, blockSize, settings: s, minActivePrefillTokens: 0 },
  );
}

/** How often each worker wins over `draws` selections, each with its own seed. */
function winsBySeed(candidates: CandidateRank[], request: Parameters<typeof selectRank>[1], draws: number) {
  const wins = new Map<bigint, number>();
  for (let seed = 0; seed < draws; seed++) {
    const id = selectRank(candidates, request, seededRng(seed))!.candidate.workerId;
    wins.set(id, (wins.get(id) ?? 0) + 1);
  }
  return wins;
}

describe("the index's tier hits as cache signals (§4.1)", () => {
  it("weight host, disk and external blocks: 2 + 0.5·3 + 0.25·(4+5) = 5.75 blocks, 92 tokens at block size 16", () => {
    const weights = { hostCacheHitWeight: 0.5, diskCacheHitWeight: 0.25 };
    const blocks = effectiveOverlapBlocks({ device: 2, hostPinned: 3, disk: 4, external: 5 }, weights);
    expect(blocks).toBe(5.75);
    expect(cachedTokens(blocks, 16)).toBe(92);
  });

  it("count a tier with weight 0 as nothing", () => {
    const blocks = effectiveOverlapBlocks(
      { device: 2, hostPinned: 3, disk: 4, external: 5 },
      { hostCacheHitWeight: 0, diskCacheHitWeight: 0 },
    );
    expect(blocks).toBe(2);
  });

  it("round cached tokens to the nearest token, halves up, never below 0", () => {
    expect(cachedTokens(2.53125, 16)).toBe(41);
    expect(cachedTokens(2.5, 3)).toBe(8);
    expect(cachedTokens(2.49, 3)).toBe(7);
    expect(cachedTokens(-1, 16)).toBe(0);
  });
});

describe("effective prefill tokens (§4.2)", () => {
  it("are isl − min(cached, isl)", () => {
    expect(effectivePrefillTokens(100, 40)).toBe(60);
    expect(effectivePrefillTokens(100, 120)).toBe(0);
  });

  it("are the whole prompt for a fresh select of [1,2,3,4]", () => {
    const request = { isl: 4, blockSize: 4, trackedBlocks: 1, settings: settingsWith() };
    const figures = rankFigures({ workerId: 1n, dpRank: 0, hits: NO_HITS, load: IDLE }, request);
    expect(figures.effectivePrefillTokens).toBe(4);
  });
});

describe("potential decode blocks after admission (§4.4, block size 16, 100 active blocks)", () => {
  const active = { ...IDLE, activeDecodeBlocks: 100 };

  it("add the prompt's blocks when it has no sequence hashes: isl 32 → 102", () => {
    expect(potentialDecodeBlocksAfterAdmission(active, 32, 16, 0)).toBe(102);
  });

  it("add two unshared tracked blocks: 102", () => {
    expect(potentialDecodeBlocksAfterAdmission({ ...active, additionalActiveBlocks: 2 }, 32, 16, 2)).toBe(
      102,
    );
  });

  it("add nothing when both tracked blocks are already active: 100", () => {
    expect(potentialDecodeBlocksAfterAdmission({ ...active, additionalActiveBlocks: 0 }, 32, 16, 2)).toBe(
      100,
    );
  });

  it("add the untracked partial tail: isl 33 with two unshared → 103", () => {
    expect(potentialDecodeBlocksAfterAdmission({ ...active, additionalActiveBlocks: 2 }, 33, 16, 2)).toBe(
      103,
    );
  });
});

describe("/potential_loads' prefill tokens (§6)", () => {
  it("are the active prefill plus the prompt's uncached part when prefill is tracked", () => {
    expect(potentialPrefillTokens(10, 100, 40, true)).toBe(70);
    expect(potentialPrefillTokens(10, 100, 0, true)).toBe(110);
    expect(potentialPrefillTokens(10, 100, 150, true)).toBe(10);
  });

  it("are the active prefill alone when it is not", () => {
    expect(potentialPrefillTokens(10, 100, 40, false)).toBe(10);
  });
});

describe("the overlap object (§4.3)", () => {
  it("covers every rank of the worker, in tokens, cpu and disk cumulative", () => {
    const summary = overlapSummary(
      [
        { dpRank: 1, hits: hits({ device: 1, disk: 1 }) },
        { dpRank: 0, hits: hits({ device: 2, hostPinned: 1, disk: 2 }) },
      ],
      16,
    );
    expect(summary).toEqual({ longestMatched: 80, gpu: 32, dp: { "0": 32, "1": 16 }, cpu: 48, disk: 80 });
    expect(Object.keys(summary)).toEqual(["longestMatched", "gpu", "dp", "cpu", "disk"]);
  });

  it("counts external blocks as disk", () => {
    expect(overlapSummary([{ dpRank: 0, hits: hits({ device: 1, external: 2 }) }], 4).disk).toBe(12);
  });

  it("lists each rank with 0 when nothing overlaps", () => {
    expect(
      overlapSummary(
        [2, 3].map((dpRank) => ({ dpRank, hits: NO_HITS })),
        16,
      ),
    ).toEqual({
      longestMatched: 0,
      gpu: 0,
      dp: { "2": 0, "3": 0 },
      cpu: 0,
      disk: 0,
    });
  });
});

describe("the worked example of §4.5 (defaults, block size 4, prompt [1..8])", () => {
  // A holds one booking of [1,2,3,4], prefill not complete; B is idle. S = [s1, s2].
  const a: CandidateRank = {
    workerId: 1n,
    dpRank: 0,
    hits: hits({ device: 1 }),
    load: { activePrefillTokens: 4, activeDecodeBlocks: 1, additionalActiveBlocks: 1, activeRequests: 1 },
  };
  const b: CandidateRank = {
    workerId: 2n,
    dpRank: 0,
    hits: NO_HITS,
    load: { ...IDLE, additionalActiveBlocks: 2 },
  };
  const request = { isl: 8, blockSize: 4, trackedBlocks: 2, settings: settingsWith() };

  it("costs both A and B 4", () => {
    const context = { isl: 8, blockSize: 4, settings: request.settings, minActivePrefillTokens: 0 };
    expect(workerLogit(a.hits, a.load, context)).toBe(4);
    expect(workerLogit(b.hits, b.load, context)).toBe(4);
  });

  it("reports effective prefill 4 on A and 8 on B", () => {
    expect(rankFigures(a, request).effectivePrefillTokens).toBe(4);
    expect(rankFigures(b, request).effectivePrefillTokens).toBe(8);
    expect(rankFigures(a, request).potentialDecodeBlocksAfterAdmission).toBe(2);
  });

  it("breaks the tie with the seeded Rng: the same seed, the same pick", () => {
    for (let seed = 0; seed < 20; seed++) {
      const first = selectRank([a, b], request, seededRng(seed))!.candidate.workerId;
      expect(selectRank([b, a], request, seededRng(seed))!.candidate.workerId).toBe(first);
    }
  });

  it("gives each about half of many seeded draws", () => {
    const wins = winsBySeed([a, b], request, 4000);
    // Binomial(4000, ½) has a standard deviation of 32; ±160 is five of them.
    expect(wins.get(1n)!).toBeGreaterThan(1840);
    expect(wins.get(2n)!).toBeGreaterThan(1840);
  });
});

describe("each override field", () => {
  // Dynamo's `per_request_overrides_change_selection`: block size 1, a 4-token prompt without
  // tracking hashes; the warm rank holds 2 device blocks and 1 active block, the cold one nothing.
  const warm: CandidateRank = {
    workerId: 0n,
    dpRank: 0,
    hits: hits({ device: 2 }),
    load: { ...IDLE, activeDecodeBlocks: 1 },
  };
  const cold: CandidateRank = { workerId: 1n, dpRank: 0, hits: NO_HITS, load: IDLE };
  const pick = (override?: Record<string, unknown>, seed = 42) =>
    selectRank(
      [warm, cold],
      { isl: 4, blockSize: 1, trackedBlocks: 0, settings: settingsWith(override) },
      seededRng(seed),
    )!;

  it("leaves the warm rank the choice by default (cost 3 against 4)", () => {
    expect(pick().candidate).toBe(warm);
    expect(pick().cost).toBe(3);
  });

  it("overlap_score_credit 0 removes the cache credit", () => {
    expect(
      logit({ device: 2 }, { activeDecodeBlocks: 1 }, 4, 1, settingsWith({ overlap_score_credit: 0 })),
    ).toBe(5);
    expect(pick({ overlap_score_credit: 0 }).candidate).toBe(cold);
  });

  it("prefill_load_scale scales what is left of the prefill", () => {
    expect(
      logit({ device: 2 }, { activeDecodeBlocks: 1 }, 4, 1, settingsWith({ prefill_load_scale: 3 })),
    ).toBe(7);
    expect(pick({ prefill_load_scale: 0 }).candidate).toBe(cold);
  });

  it("router_temperature above 0 samples, at the softmax's rates", () => {
    const request = {
      isl: 4,
      blockSize: 1,
      trackedBlocks: 0,
      settings: settingsWith({ router_temperature: 1 }),
    };
    const wins = winsBySeed([warm, cold], request, 4000);
    // p(warm) = 1 / (1 + e^−1) ≈ 0.731; the binomial standard deviation over 4000 is 28.
    const expected = 4000 / (1 + Math.exp(-1));
    expect(Math.abs(wins.get(0n)! - expected)).toBeLessThan(140);
    expect(wins.get(1n)!).toBeGreaterThan(0);
  });

  it("track_prefill_tokens false drops the prefill term", () => {
    const untracked = settingsWith({ track_prefill_tokens: false });
    expect(logit({ device: 2 }, { activeDecodeBlocks: 1, activePrefillTokens: 40 }, 4, 1, untracked)).toBe(1);
    expect(pick({ track_prefill_tokens: false }).candidate).toBe(cold);
    const figures = rankFigures(
      { ...warm, load: { ...warm.load, activePrefillTokens: 40 } },
      { isl: 4, blockSize: 1, trackedBlocks: 0, settings: untracked },
    );
    expect(figures.potentialPrefillTokens).toBe(40);
  });

  it("assume_kv_reuse is recorded for the hasher and leaves the cost alone", () => {
    const settings = settingsWith({ assume_kv_reuse: false });
    expect(settings.assumeKvReuse).toBe(false);
    expect(pick({ assume_kv_reuse: false }).cost).toBe(3);
  });

  it("shared_cache_multiplier changes nothing, the HTTP service having no shared cache", () => {
    expect(pick({ shared_cache_multiplier: 1 }).candidate).toBe(warm);
    expect(pick({ shared_cache_multiplier: 1 }).cost).toBe(3);
  });

  it("the deprecated overlap_score_weight sets the scale, and at 0 the credit", () => {
    expect(pick({ overlap_score_weight: 3 }).cost).toBe(7);
    expect(pick({ overlap_score_weight: 0 }).candidate).toBe(cold);
    expect(pick({ overlap_score_weight: 0, overlap_score_credit: 5 }).candidate).toBe(cold);
  });
});

describe("the logit's other terms", () => {
  it("credits host and disk blocks at their weights", () => {
    // Cached 1 + 0.75·2 + 0.25·2 = 3 blocks = 12 tokens; raw (20 + 12) / 4 = 8; credit 3 → 5.
    expect(logit({ device: 1, hostPinned: 2, disk: 1, external: 1 }, {}, 32, 4, settingsWith())).toBe(5);
  });

  it("decays the device credit with the rank's prefill above the least loaded: 1 / (1 + decay · excess / request blocks)", () => {
    const config = { ...DEFAULT_KV_ROUTER_CONFIG, overlapScoreCreditDecay: 1 };
    const load = { ...IDLE, activePrefillTokens: 8 };
    const context = (minActivePrefillTokens: number, s = settingsWith(undefined, config)) => ({
      isl: 8,
      blockSize: 4,
      settings: s,
      minActivePrefillTokens,
    });
    // Raw (8 + 0 + 8) / 4 = 4. Excess 8 tokens = 2 blocks over 2 request blocks: decay ½, credit 1.
    expect(workerLogit(hits({ device: 2 }), load, context(0))).toBe(3);
    expect(workerLogit(hits({ device: 2 }), load, context(8))).toBe(2);
    expect(workerLogit(hits({ device: 2 }), load, context(0, settingsWith()))).toBe(2);
  });

  it("charges decode_active_request_weight per active request", () => {
    const s = { ...settingsWith(), decodeActiveRequestWeight: 2 };
    expect(logit({}, { activeRequests: 3 }, 4, 4, s) - logit({}, {}, 4, 4, s)).toBe(6);
  });
});

describe("the preferred-taint multiplier", () => {
  it("is exp(−tanh(Σ weights of the preferred taints the worker has)), the weights as f32", () => {
    const preferred = { fast: 0.1, spot: -0.5 };
    expect(preferredTaintMultiplier(preferred, ["fast"])).toBe(Math.exp(-Math.tanh(Math.fround(0.1))));
    expect(preferredTaintMultiplier(preferred, ["fast"])).not.toBe(Math.exp(-Math.tanh(0.1)));
    expect(preferredTaintMultiplier(preferred, ["spot", "other"])).toBe(Math.exp(-Math.tanh(-0.5)));
    expect(preferredTaintMultiplier(preferred, [])).toBe(1);
    expect(preferredTaintMultiplier({}, ["fast"])).toBeUndefined();
    expect(preferredTaintMultiplier(undefined, ["fast"])).toBeUndefined();
  });

  it("sends a tie to the preferred worker and away from the avoided one", () => {
    const rank = (workerId: bigint, taints: string[]): CandidateRank => ({
      workerId,
      dpRank: 0,
      hits: NO_HITS,
      load: IDLE,
      taints,
    });
    const request = { isl: 8, blockSize: 4, trackedBlocks: 2, settings: settingsWith() };
    const candidates = [rank(1n, []), rank(2n, ["fast"]), rank(3n, ["spot"])];
    for (let seed = 0; seed < 20; seed++) {
      const chosen = selectRank(
        candidates,
        { ...request, preferredTaints: { fast: 1, spot: -1 } },
        seededRng(seed),
      )!;
      expect(chosen.candidate.workerId).toBe(2n);
      expect(chosen.cost).toBeCloseTo(2 * Math.exp(-Math.tanh(1)), 12);
    }
  });
});
