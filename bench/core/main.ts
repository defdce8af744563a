/**
 * The core benchmark: our tracker and the baseline, side by side in one process, on the same trace.
 * Run by `bench/run.mjs` as a bundle under `node --expose-gc`; argv[2] is the baseline module's path.
 * Prints one JSON line: per book size N, cycles/s, `potential_loads` latency and heap per request.
 *
 * Our heap is read twice: the tracker as it runs, and the same tracker with its cache index swapped
 * for one that records nothing (`no-index.ts`). The index keeps what finished requests cached, up to
 * its cap of entries, whatever the number of live requests: every /add records its prompt, so after
 * the fill and churn it is full at every N (about 17.6 MB at the default 200,000 entries, 1,760 B per
 * request at 10,000 and 176 B at 100,000). The second reading is the live requests' own state, the
 * figure the baseline (which has no index) is compared with; the index's bytes per entry are the
 * cache-index part's figure.
 */
import { pathToFileURL } from "node:url";
import { heapBytes, percentile } from "../measures";
import { NoIndex, withIndex } from "./no-index";
import { cycleRates, elapsedMs, naive, ours } from "./rates";
import { NaiveSubject, type NaiveTrackerClass, OurSubject, type Subject } from "./subjects";
import { promptBigints, queryArray, Rng, requestOf } from "./trace";
import { BOOK_SIZES, fill, materialize, run, T0 } from "./workload";

/** Churn before a heap reading, so that free lists and table sizes are those of a book in use. */
const HEAP_CHURN = 20_000;
const QUERIES = 2_000;
/**
 * Untimed queries first, so the timed ones meet optimised code. The heap readings before them drop
 * subjects whose objects the JIT's code had embedded, which deoptimises most of the tracker (V8's
 * "weak objects"), and the cycles never call `potential_loads`: at N = 1,000 it takes about 5,000
 * queries before the per-rank load reads are optimised again, and until then the p50 is about twice
 * the steady state's. The baseline gets one: each of its queries is a long loop, optimised within it.
 */
const WARMUP_QUERIES = 10_000;
/** The baseline's scan grows with N; it gets this long for its queries, and at least 20 of them. */
const BASELINE_QUERY_BUDGET_MS = 4_000;

/** Heap in use after full collections, counting typed-array backing stores (`arrayBuffers`). */

/**
 * Heap bytes per live request of a fresh subject holding `live` requests after some churn; only the
 * subject is alive between the two readings (its inputs are dropped as they are consumed).
 */
function heapPerRequest<H>(subject: () => Subject<H>, form: (h: BigUint64Array) => H, live: number): number {
  const base = heapBytes();
  const s = subject();
  fill(s, live, form);
  churn(s, live, form);
  const bytes = heapBytes() - base;
  if (s.name === "") throw new Error("unreachable: keeps the subject alive through the reading");
  return bytes / live;
}

/** `subject` with a cache index that records nothing: its heap is the live requests' state alone. */
function withoutIndex(subject: OurSubject): OurSubject {
  withIndex(subject.tracker, new NoIndex());
  return subject;
}

/** A separate frame, so that no interpreter register keeps the churn's inputs alive afterwards. */
function churn<H>(s: Subject<H>, live: number, form: (h: BigUint64Array) => H): void {
  run(s, materialize(live, live + HEAP_CHURN, live, form));
}

interface Latency {
  p50Us: number;
  p99Us: number;
  querySamples: number;
}

function latencyOf(samplesUs: number[]): Latency {
  const sorted = [...samplesUs].sort((x, y) => x - y);
  return { p50Us: percentile(sorted, 0.5), p99Us: percentile(sorted, 0.99), querySamples: sorted.length };
}

/** `count` 128-block queries, each continuing a random one of the `live` requests booked before `next`. */
function queriesOf(count: number, live: number, next: number, seed: number): BigUint64Array[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, (_, q) => {
    const i = next - live + rng.below(live);
    return queryArray(i, requestOf(i).family, q);
  });
}

/** `potential_loads` latency of both subjects on the same queries, each continuing a random live prompt. */
function queryLatencies(a: Subject<BigUint64Array>, b: Subject<bigint[]>, live: number, next: number) {
  const queries = queriesOf(QUERIES, live, next, live);
  const now = T0 + next;
  const warmup = queriesOf(WARMUP_QUERIES, live, next, ~live);
  for (const q of warmup) a.potentialLoads(q, now);
  b.potentialLoads(promptBigints(warmup[0]!), now);
  const latA: number[] = [];
  for (const q of queries) {
    const start = process.hrtime.bigint();
    a.potentialLoads(q, now);
    latA.push(elapsedMs(start) * 1000);
  }
  const latB: number[] = [];
  const deadline = performance.now() + BASELINE_QUERY_BUDGET_MS;
  for (const q of queries) {
    if (latB.length >= 20 && performance.now() > deadline) break;
    const big = promptBigints(q);
    const start = process.hrtime.bigint();
    b.potentialLoads(big, now);
    latB.push(elapsedMs(start) * 1000);
  }
  return { ours: latencyOf(latA), baseline: latencyOf(latB) };
}

function measure(Naive: NaiveTrackerClass, live: number) {
  const heap = {
    ours: heapPerRequest(() => new OurSubject(T0), ours, live),
    oursLiveState: heapPerRequest(() => withoutIndex(new OurSubject(T0)), ours, live),
    baseline: heapPerRequest(() => new NaiveSubject(Naive), naive, live),
  };
  const a = new OurSubject(T0);
  fill(a, live, ours);
  const b = new NaiveSubject(Naive);
  fill(b, live, naive);
  const rates = cycleRates(a, b, live);
  const latency = queryLatencies(a, b, live, rates.next);
  if (a.tracker.liveRequests !== live) throw new Error(`book drifted: ${a.tracker.liveRequests} live`);
  return {
    live,
    ours: {
      cyclesPerSec: rates.ours,
      ...latency.ours,
      heapBytesPerRequest: heap.ours,
      liveStateBytesPerRequest: heap.oursLiveState,
    },
    baseline: { cyclesPerSec: rates.baseline, ...latency.baseline, heapBytesPerRequest: heap.baseline },
  };
}

const naivePath = process.argv[2];
if (!naivePath) throw new Error("usage: core.mjs <path of naive-tracker.mjs>");
const { NaiveTracker } = (await import(pathToFileURL(naivePath).href)) as { NaiveTracker: NaiveTrackerClass };

// A throwaway pass compiles every path first, so that JIT code is not counted as tracker heap.
measure(NaiveTracker, 2_000);
const sizes = [];
for (const live of BOOK_SIZES) {
  sizes.push(measure(NaiveTracker, live));
  process.stderr.write(`core: N=${live} done\n`);
}
process.stdout.write(`@@bench ${JSON.stringify({ sizes })}\n`);
