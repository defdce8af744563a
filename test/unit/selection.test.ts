import { describe, expect, it } from "vitest";
import { seededRng } from "../../durable-objects/core/routing/rng";
import {
  chooseIndex,
  kvLogit,
  pickMinimum,
  pickSoftmax,
  softmaxProbabilities,
} from "../../durable-objects/core/routing/selection";

/** Pearson's statistic of observed counts against expected counts. */
function chiSquare(observed: number[], expected: number[]): number {
  return observed.reduce((sum, o, i) => sum + (o - expected[i]!) ** 2 / expected[i]!, 0);
}

/** Upper 0.1% points of the chi-square distribution by degrees of freedom: a fair picker fails 1 run in 1000. */
const CHI_SQUARE_999 = { 1: 10.83, 2: 13.82, 3: 16.27, 4: 18.47, 5: 20.52 } as const;

function counts(n: number, draws: number, pick: () => number): number[] {
  const seen = new Array<number>(n).fill(0);
  for (let i = 0; i < draws; i++) seen[pick()]!++;
  return seen;
}

describe("the KV cost", () => {
  it("is overlap_score_weight × potential prefill tokens / block size + potential decode blocks", () => {
    const load = { potentialPrefillTokens: 40, potentialDecodeBlocks: 3 };
    expect(kvLogit(load, { overlapScoreWeight: 1, blockSize: 16, countDecodeBlocks: true })).toBe(2.5 + 3);
    expect(kvLogit(load, { overlapScoreWeight: 2, blockSize: 16, countDecodeBlocks: true })).toBe(5 + 3);
    expect(kvLogit(load, { overlapScoreWeight: 0, blockSize: 16, countDecodeBlocks: true })).toBe(3);
  });

  it("leaves decode blocks out on the prefill hop", () => {
    const load = { potentialPrefillTokens: 40, potentialDecodeBlocks: 3 };
    expect(kvLogit(load, { overlapScoreWeight: 1, blockSize: 16, countDecodeBlocks: false })).toBe(2.5);
  });
});

describe("the minimum at temperature 0", () => {
  it("takes the unique minimum whatever the draws", () => {
    for (let seed = 0; seed < 50; seed++) expect(pickMinimum([4, 2.5, 3, 9], seededRng(seed))).toBe(1);
  });

  it("breaks ties among equal minima fairly (chi-square over 40,000 draws)", () => {
    const logits = [5, 3, 3, 7, 3, 3];
    const rng = seededRng(42);
    const seen = counts(logits.length, 40_000, () => pickMinimum(logits, rng));
    expect([seen[0], seen[3]]).toEqual([0, 0]);
    const tied = [seen[1]!, seen[2]!, seen[4]!, seen[5]!];
    expect(chiSquare(tied, [10_000, 10_000, 10_000, 10_000])).toBeLessThan(CHI_SQUARE_999[3]);
  });

  it("gives the first and the last of the tied an equal share (no positional bias)", () => {
    const logits = [1, 1];
    const rng = seededRng(7);
    const seen = counts(2, 20_000, () => pickMinimum(logits, rng));
    expect(chiSquare(seen, [10_000, 10_000])).toBeLessThan(CHI_SQUARE_999[1]);
  });
});

describe("the softmax at temperature > 0", () => {
  it("is p_i ∝ exp(−(l_i − l_min) / ((l_max − l_min) × T))", () => {
    const logits = [3, 4, 5, 7];
    const t = 0.5;
    const weights = logits.map((l) => Math.exp(-(l - 3) / ((7 - 3) * t)));
    const total = weights.reduce((a, b) => a + b, 0);
    const p = softmaxProbabilities(logits, t);
    expect([...p].map((x) => x.toFixed(12))).toEqual(weights.map((w) => (w / total).toFixed(12)));
  });

  it("is uniform when every logit is equal", () => {
    expect([...softmaxProbabilities([2, 2, 2, 2], 0.7)]).toEqual([0.25, 0.25, 0.25, 0.25]);
  });

  it("draws with the formula's frequencies (seeded, chi-square over 50,000 draws)", () => {
    const logits = [10, 11, 12, 14, 18];
    const t = 0.4;
    const p = softmaxProbabilities(logits, t);
    const rng = seededRng(2024);
    const draws = 50_000;
    const seen = counts(logits.length, draws, () => pickSoftmax(logits, t, rng));
    expect(
      chiSquare(
        seen,
        [...p].map((x) => x * draws),
      ),
    ).toBeLessThan(CHI_SQUARE_999[4]);
    // The cheapest is the likeliest, the dearest the least likely: e^(1/T) times apart.
    expect(p[0]! / p[4]!).toBeCloseTo(Math.exp(1 / t), 9);
  });

  it("approaches the minimum as the temperature falls", () => {
    const rng = seededRng(5);
    const seen = counts(3, 1_000, () => pickSoftmax([1, 2, 3], 0.01, rng));
    expect(seen[0]).toBe(1_000);
  });
});

describe("the other modes", () => {
  it("round robin takes the candidates in turn", () => {
    const rng = seededRng(1);
    const picks = [0, 1, 2, 3, 4, 5, 6].map((turn) => chooseIndex("round_robin", [9, 1, 5], 0, rng, turn));
    expect(picks).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it("random ignores the costs and picks uniformly (chi-square over 30,000 draws)", () => {
    const rng = seededRng(99);
    const seen = counts(3, 30_000, () => chooseIndex("random", [0, 100, 1000], 0, rng, 0));
    expect(chiSquare(seen, [10_000, 10_000, 10_000])).toBeLessThan(CHI_SQUARE_999[2]);
  });

  it("kv takes the minimum at temperature 0 and samples above it", () => {
    const rng = seededRng(3);
    expect(chooseIndex("kv", [5, 1, 3], 0, rng, 0)).toBe(1);
    const seen = counts(3, 3_000, () => chooseIndex("kv", [5, 1, 3], 1, rng, 0));
    expect(seen.every((n) => n > 0)).toBe(true);
  });
});

describe("the seeded generator", () => {
  it("repeats its sequence for a seed and differs between seeds", () => {
    const a = seededRng(17);
    const b = seededRng(17);
    const c = seededRng(18);
    const seqA = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(seqA);
    expect([c(), c(), c()]).not.toEqual(seqA);
    for (const x of seqA) expect(x >= 0 && x < 1).toBe(true);
  });
});
