import { describe, expect, it } from "vitest";
import {
  type CandidateRank,
  pickBySoftmax,
  pickLowestCost,
  scoreCandidates,
  selectRank,
} from "../../durable-objects/core/routing/dynamo-choice";
import { NO_HITS, type RankLoad } from "../../durable-objects/core/routing/dynamo-cost";
import { type Rng, seededRng } from "../../durable-objects/core/routing/rng";
import { DEFAULT_KV_ROUTER_CONFIG } from "../../durable-objects/core/routing/router-config";
import { selectionSettings } from "../../durable-objects/core/routing/router-config-override";

/** Pearson's statistic of observed counts against expected counts. */
function chiSquare(observed: number[], expected: number[]): number {
  return observed.reduce((sum, o, i) => sum + (o - expected[i]!) ** 2 / expected[i]!, 0);
}

/** Upper 0.1% points of the chi-square distribution: a fair picker fails 1 run in 1000. */
const CHI_SQUARE_999 = { 1: 10.83, 2: 13.82, 3: 16.27 } as const;

function counts(n: number, draws: number, pick: () => number): number[] {
  const seen = new Array<number>(n).fill(0);
  for (let i = 0; i < draws; i++) seen[pick()]!++;
  return seen;
}

/** An Rng that fails the test if drawn from. */
const NO_DRAWS: Rng = () => {
  throw new Error("drew from the Rng");
};

/** A rank whose cost is `blocks` decode blocks (idle otherwise, prompt fully tracked). */
function rank(workerId: bigint, dpRank: number, blocks: number, taints?: string[]): CandidateRank {
  const load: RankLoad = {
    activePrefillTokens: 0,
    activeDecodeBlocks: blocks,
    additionalActiveBlocks: 0,
    activeRequests: 0,
  };
  return { workerId, dpRank, hits: NO_HITS, load, ...(taints && { taints }) };
}

/** Decode-only costs: prefill tracking off, so a rank's cost is its decode blocks. */
const request = (temperature = 0) => ({
  isl: 16,
  blockSize: 16,
  trackedBlocks: 1,
  settings: {
    ...selectionSettings(DEFAULT_KV_ROUTER_CONFIG, undefined),
    trackPrefillTokens: false,
    routerTemperature: temperature,
  },
});

describe("the row order", () => {
  it("is worker id, then dp rank, whatever order the candidates come in", () => {
    const candidates = [rank(20n, 1, 1), rank(3n, 0, 1), rank(20n, 0, 1), rank(2n ** 63n, 0, 1)];
    expect(
      scoreCandidates(candidates, request()).map((s) => [s.candidate.workerId, s.candidate.dpRank]),
    ).toEqual([
      [3n, 0],
      [20n, 0],
      [20n, 1],
      [2n ** 63n, 0],
    ]);
  });

  it("makes a seeded choice independent of the listing order, at either temperature", () => {
    const candidates = [rank(30n, 0, 2), rank(10n, 0, 2), rank(20n, 0, 2), rank(20n, 1, 3)];
    const reversed = [...candidates].reverse();
    for (const temperature of [0, 0.7]) {
      for (let seed = 0; seed < 50; seed++) {
        const first = selectRank(candidates, request(temperature), seededRng(seed))!.candidate;
        const second = selectRank(reversed, request(temperature), seededRng(seed))!.candidate;
        expect([second.workerId, second.dpRank]).toEqual([first.workerId, first.dpRank]);
      }
    }
  });
});

describe("the choice at temperature 0", () => {
  it("takes the unique lowest cost whatever the draws", () => {
    for (let seed = 0; seed < 50; seed++) expect(pickLowestCost([4, 2.5, 3, 9], seededRng(seed))).toBe(1);
  });

  it("breaks exact ties uniformly (chi-square over 40,000 draws)", () => {
    const costs = [5, 3, 3, 7, 3, 3];
    const rng = seededRng(42);
    const seen = counts(costs.length, 40_000, () => pickLowestCost(costs, rng));
    expect([seen[0], seen[3]]).toEqual([0, 0]);
    const tied = [seen[1]!, seen[2]!, seen[4]!, seen[5]!];
    expect(chiSquare(tied, [10_000, 10_000, 10_000, 10_000])).toBeLessThan(CHI_SQUARE_999[3]);
  });

  it("treats nearly equal costs as different: only exact minima tie", () => {
    for (let seed = 0; seed < 50; seed++) expect(pickLowestCost([1 + 1e-12, 1], seededRng(seed))).toBe(1);
  });
});

describe("the softmax choice above temperature 0", () => {
  /** The closed form: p_i = exp(−(c_i − c_min)/((c_max − c_min)·T)) / Σ_j of the same. */
  function closedForm(costs: number[], t: number): number[] {
    const min = Math.min(...costs);
    const range = Math.max(...costs) - min;
    const weights = costs.map((c) => Math.exp(-(c - min) / (range * t)));
    const sum = weights.reduce((a, b) => a + b, 0);
    return weights.map((w) => w / sum);
  }

  it("takes the first row whose cumulative probability reaches the draw", () => {
    const costs = [2, 3, 5];
    const p = closedForm(costs, 0.5);
    const at = (u: number) => pickBySoftmax(costs, 0.5, () => u);
    expect(at(0)).toBe(0);
    expect(at(p[0]!)).toBe(0);
    expect(at(p[0]! + 1e-9)).toBe(1);
    expect(at(p[0]! + p[1]!)).toBe(1);
    expect(at(p[0]! + p[1]! + 1e-9)).toBe(2);
    expect(at(1 - 1e-12)).toBe(2);
  });

  it("draws rows at the closed form's rates (chi-square over 60,000 draws)", () => {
    for (const [costs, t] of [
      [[2, 3, 5], 0.5],
      [[10, 10, 12, 40], 2],
    ] as const) {
      const rng = seededRng(7);
      const draws = 60_000;
      const seen = counts(costs.length, draws, () => pickBySoftmax(costs, t, rng));
      const expected = closedForm([...costs], t).map((p) => p * draws);
      expect(chiSquare(seen, expected)).toBeLessThan(CHI_SQUARE_999[3]);
    }
  });

  it("is uniform when every cost is equal", () => {
    const rng = seededRng(3);
    const seen = counts(3, 30_000, () => pickBySoftmax([4, 4, 4], 0.8, rng));
    expect(chiSquare(seen, [10_000, 10_000, 10_000])).toBeLessThan(CHI_SQUARE_999[2]);
  });

  it("is what selectRank uses when the settings' temperature is above 0", () => {
    const candidates = [rank(1n, 0, 2), rank(2n, 0, 3), rank(3n, 0, 5)];
    const p = closedForm([2, 3, 5], 0.5);
    expect(selectRank(candidates, request(0.5), () => p[0]! + 1e-9)!.candidate.workerId).toBe(2n);
    expect(selectRank(candidates, request(0), () => 0.99)!.candidate.workerId).toBe(1n);
  });
});

describe("selectRank", () => {
  it("has nothing to choose from no candidates", () => {
    expect(selectRank([], request(), seededRng(1))).toBeUndefined();
  });

  it("returns the chosen rank's cost and figures", () => {
    const chosen = selectRank([rank(1n, 0, 7), rank(2n, 0, 4)], request(), seededRng(1))!;
    expect(chosen.candidate.workerId).toBe(2n);
    expect(chosen.cost).toBe(4);
    expect(chosen.figures).toEqual({
      effectiveOverlapBlocks: 0,
      cachedTokens: 0,
      effectivePrefillTokens: 16,
      potentialPrefillTokens: 0,
      potentialDecodeBlocks: 4,
      potentialDecodeBlocksAfterAdmission: 4,
    });
  });

  it("scores a pinned rank alone, without the taint multiplier and without a draw", () => {
    const pinned = rank(5n, 2, 4, ["spot"]);
    const r = { ...request(0.9), preferredTaints: { spot: -1 }, pinned: true };
    const chosen = selectRank([pinned], r, NO_DRAWS)!;
    expect(chosen.candidate).toBe(pinned);
    expect(chosen.cost).toBe(4);
    const unpinned = selectRank([pinned], { ...r, pinned: false }, seededRng(1))!;
    expect(unpinned.cost).toBeCloseTo(4 * Math.exp(Math.tanh(1)), 12);
  });
});
