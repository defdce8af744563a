/**
 * One autocannon run with a warm-up, reduced to the figures the report needs. Any non-2xx answer,
 * connection error or timeout fails the benchmark: a fast wrong answer is not a result.
 */
import autocannon, { type Options } from "autocannon";

export const CONNECTIONS = 32;
const WARMUP_S = 2;
const MEASURE_S = 8;

export interface LoadFigures {
  scenario: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
}

export async function load(scenario: string, options: Options): Promise<LoadFigures> {
  await autocannon({ connections: CONNECTIONS, duration: WARMUP_S, ...options });
  return measure(scenario, MEASURE_S, options);
}

/** One autocannon run of `seconds`, checked as `load` checks its measured run. */
export async function measure(scenario: string, seconds: number, options: Options): Promise<LoadFigures> {
  const result = await autocannon({ connections: CONNECTIONS, duration: seconds, ...options });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0 || result.requests.total === 0) {
    throw new Error(
      `${scenario}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts of ` +
        `${result.requests.total} requests (status counts ${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  return {
    scenario,
    requestsPerSec: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
  };
}
