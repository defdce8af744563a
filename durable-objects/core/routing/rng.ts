/**
 * Randomness for `/route` (tie-breaks, softmax draws, random mode), injected so tests can seed it.
 * Production draws from `Math.random`, which every isolate seeds on its own: there is no fixed seed.
 */

/** A source of uniform draws in [0, 1). */
export type Rng = () => number;

export const systemRng: Rng = Math.random;

/**
 * A deterministic generator (SplitMix32 over a 32-bit state). Statistically sound for sampling and
 * tests, not for secrets. Draws have 2^-32 resolution, plenty for choosing among ranks.
 */
export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z ^= z >>> 16;
    return (z >>> 0) / 2 ** 32;
  };
}

/** A uniform integer in 0 ..< n. */
export function drawIndex(rng: Rng, n: number): number {
  return Math.min(n - 1, Math.floor(rng() * n));
}
