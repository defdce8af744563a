/**
 * Cycle throughput of two subjects on the same trace, measured the same way wherever it is measured
 * (the core benchmark, and the index floor beside it): rounds alternating, the median round counts.
 */
import type { Subject } from "./subjects";
import { promptBigints } from "./trace";
import { materialize, run } from "./workload";

/** Rounds of each subject, alternating; the median round counts (a shared machine has bursts). */
const ROUNDS = 5;
const CYCLES_PER_ROUND = 20_000;

/** The prompt forms: our core takes `BigUint64Array` (as RPC delivers it), the baseline `bigint[]`. */
export const ours = (h: BigUint64Array) => h;
export const naive = (h: BigUint64Array) => promptBigints(h);

export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
}

export function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * Add+prefill+free cycles per second of each subject, both holding `live` requests, rounds
 * alternating so drift hits both alike; `next` is the first request the trace has not booked yet.
 */
export function cycleRates(a: Subject<BigUint64Array>, b: Subject<bigint[]>, live: number) {
  const rates = { ours: [] as number[], baseline: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const from = live + round * CYCLES_PER_ROUND;
    const to = from + CYCLES_PER_ROUND;
    const batchA = materialize(from, to, live, ours);
    let start = process.hrtime.bigint();
    run(a, batchA);
    rates.ours.push(CYCLES_PER_ROUND / (elapsedMs(start) / 1000));
    const batchB = materialize(from, to, live, naive);
    start = process.hrtime.bigint();
    run(b, batchB);
    rates.baseline.push(CYCLES_PER_ROUND / (elapsedMs(start) / 1000));
  }
  return {
    ours: median(rates.ours),
    baseline: median(rates.baseline),
    next: live + ROUNDS * CYCLES_PER_ROUND,
  };
}
