/**
 * Routing quality: one seeded trace (`trace.ts`) replayed, in Node on the pure core, through the real
 * routing code of four policies, each on a fresh tracker of 8 ranks (8 workers × 1 DP rank):
 *
 * - `select_and_reserve`: the object's `SelectionHost` over catalog workers (`bench/selection/`):
 *   Dynamo's cost with the cache index's credit;
 * - round robin: `/route`'s core (`routeRequest`) with every worker's card saying `round_robin`;
 * - `/route` without the credit: `routeRequest` in its default KV mode on a tracker whose cache index
 *   records nothing (`NoIndex`), so every rank is charged the whole prompt, as before the credit;
 * - `/route` as it is: the same with the tracker's own index, for reference.
 *
 * What is measured is the same for all: a *cache hit* is a block of the request that an index of the
 * deployed shape (`ApproximateIndex`, 120 s TTL, the default cap), kept by the bench beside each
 * replay and recording every booking of it, already held on the chosen rank at booking time; the
 * *best-rank* figure is what the best rank held. Load spread samples each rank's live blocks
 * (`activeDecodeBlocks` of the tracker's `/loads`) every 10 requests: max ÷ mean and the coefficient
 * of variation. Both skip the first 2,400 requests (one TTL), while the index fills. Prints a table
 * and one `@@bench` JSON line.
 */
import { ApproximateIndex } from "../../durable-objects/core/cache-index/approximate-index";
import type { PromptBlocks } from "../../durable-objects/core/cache-index/cache-index";
import { seededRng } from "../../durable-objects/core/routing/rng";
import { RoutingState, routeRequest } from "../../durable-objects/core/routing/route-request";
import { Tracker } from "../../durable-objects/core/tracker";
import { DEFAULT_ROUTER_TTL_SECS, MAX_CACHE_INDEX_ENTRIES } from "../../durable-objects/limits";
import type { RouterMode } from "../../durable-objects/types";
import { NoIndex, withIndex } from "../core/no-index";
import { selectionPartition, workerIds } from "../selection/partition";
import * as trace from "./trace";

const RANKS = 8;
const WARMUP_REQUESTS = (DEFAULT_ROUTER_TTL_SECS * 1000) / trace.STEP_MS;
const SAMPLE_EVERY = 10;
const T0 = 1_700_000_000_000;

interface Placement {
  workerId: bigint;
  dpRank: number;
}

interface Policy {
  name: string;
  tracker: Tracker;
  book(req: trace.TraceRequest, now: number, seed: number): Placement;
  prefillComplete(id: string, now: number): void;
  end(id: string, now: number): void;
}

function selectAndReserve(): Policy {
  const { tracker, host } = selectionPartition({ workers: RANKS, dpSize: 1 }, T0);
  const check = (result: { ok: boolean; message?: string }) => {
    if (!result.ok) throw new Error(result.message);
  };
  return {
    name: "select_and_reserve (cost with the cache index)",
    tracker,
    book(req, now, seed) {
      const booked = host.select(
        {
          mode: "book",
          selectionId: req.id,
          prompt: {
            kind: "hashes",
            blockHashes: req.blockHashes,
            sequenceHashes: req.sequenceHashes,
            islTokens: req.isl,
          },
          seed,
        },
        now,
      );
      if (!booked.ok) throw new Error(booked.message);
      return booked;
    },
    prefillComplete: (id, now) => check(host.prefillComplete(id, now)),
    end: (id, now) => check(host.end(id, now)),
  };
}

function route(name: string, mode: RouterMode, credit: boolean): Policy {
  const tracker = new Tracker({ model: "bench", tenant: "default" });
  for (const workerId of workerIds(RANKS)) {
    const registered = tracker.register(
      { workerId, blockSize: trace.BLOCK_SIZE, dpStart: 0, dpSize: 1, routerConfig: { routerMode: mode } },
      T0,
    );
    if (!registered.ok) throw new Error(registered.message);
  }
  if (!credit) withIndex(tracker, new NoIndex());
  const state = new RoutingState();
  return {
    name,
    tracker,
    book(req, now, seed) {
      const input = { requestId: req.id, hashes: req.sequenceHashes, newIslTokens: req.isl };
      const routed = routeRequest(tracker, state, input, now, seededRng(seed));
      if (!routed.ok) throw new Error(routed.message);
      return routed.decode;
    },
    prefillComplete(id, now) {
      const done = tracker.prefillComplete(id, now);
      if (!done.ok) throw new Error(done.message);
    },
    end: (id, now) => tracker.free(id, now),
  };
}

/** Ids due at each request index, for the lifecycle steps that run before it is booked. */
function dueLists(requests: trace.TraceRequest[], at: (r: trace.TraceRequest) => number): string[][] {
  const due = Array.from({ length: requests.length }, () => [] as string[]);
  for (const req of requests) if (at(req) < requests.length) due[at(req)]!.push(req.id);
  return due;
}

function replay(policy: Policy, requests: trace.TraceRequest[]) {
  const observer = new ApproximateIndex({ maxEntries: MAX_CACHE_INDEX_ENTRIES, keyOnLocal: false, seed: 1 });
  const prefills = dueLists(requests, (r) => r.prefillAt);
  const ends = dueLists(requests, (r) => r.endAt);
  let blocks = 0;
  let hits = 0;
  let bestHits = 0;
  const maxOverMean: number[] = [];
  const cv: number[] = [];
  const meanBlocks: number[] = [];
  for (const [r, req] of requests.entries()) {
    const now = T0 + r * trace.STEP_MS;
    for (const id of prefills[r]!) policy.prefillComplete(id, now);
    for (const id of ends[r]!) policy.end(id, now);
    // Known only by its sequence hashes, as the tracker records an `/add`'s prompt; the index is
    // keyed on them alone (`keyOnLocal: false`, as the tracker's).
    const prompt: PromptBlocks = { localHashes: req.sequenceHashes, sequenceHashes: req.sequenceHashes };
    const held = observer.overlap(prompt, now);
    const chosen = policy.book(req, now, r + 1);
    observer.recordBooking(chosen.workerId, chosen.dpRank, prompt, now);
    if (r < WARMUP_REQUESTS) continue;
    blocks += req.sequenceHashes.length;
    const onChosen = held.find((row) => row.workerId === chosen.workerId && row.dpRank === chosen.dpRank);
    hits += onChosen?.deviceBlocks ?? 0;
    bestHits += held.reduce((best, row) => Math.max(best, row.deviceBlocks), 0);
    if (r % SAMPLE_EVERY !== 0) continue;
    const loads = policy.tracker.listLoads(now).map((l) => l.activeDecodeBlocks);
    if (loads.length !== RANKS) throw new Error(`${loads.length} ranks, not ${RANKS}`);
    const mean = loads.reduce((s, x) => s + x, 0) / RANKS;
    if (mean === 0) continue;
    const sd = Math.sqrt(loads.reduce((s, x) => s + (x - mean) ** 2, 0) / RANKS);
    maxOverMean.push(Math.max(...loads) / mean);
    cv.push(sd / mean);
    meanBlocks.push(mean);
  }
  const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    policy: policy.name,
    blocks,
    hitBlocks: hits,
    hitRate: hits / blocks,
    bestRankHitRate: bestHits / blocks,
    samples: cv.length,
    meanMaxOverMean: avg(maxOverMean),
    worstMaxOverMean: Math.max(...maxOverMean),
    meanCv: avg(cv),
    meanLiveBlocksPerRank: avg(meanBlocks),
    liveAtEnd: policy.tracker.liveRequests,
  };
}

const requests = trace.buildTrace();
const policies = [
  selectAndReserve,
  () => route("round robin (/route, round_robin cards)", "round_robin", true),
  () => route("/route without the cache credit (index records nothing)", "kv", false),
  () => route("/route as it is (credits the cache index)", "kv", true),
];
const results = policies.map((make) => replay(make(), requests));
const liveAtEnd = new Set(results.map((r) => r.liveAtEnd));
if (liveAtEnd.size !== 1) throw new Error(`the replays ended with different books: ${[...liveAtEnd]}`);

const result = {
  ranks: RANKS,
  requests: requests.length,
  conversations: trace.CONVERSATIONS,
  zipfExponent: trace.ZIPF_EXPONENT,
  prefixBlocks: trace.PREFIX_BLOCKS,
  suffixBlocks: trace.SUFFIX_BLOCKS,
  holdRequests: trace.HOLD,
  prefillAfterRequests: trace.PREFILL_AFTER,
  stepMs: trace.STEP_MS,
  warmupRequests: WARMUP_REQUESTS,
  sampleEvery: SAMPLE_EVERY,
  meanPromptBlocks: requests.reduce((s, r) => s + r.sequenceHashes.length, 0) / requests.length,
  policies: results,
};
const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(7);
console.log(
  `routing quality (${RANKS} ranks, ${requests.length} requests, ${trace.CONVERSATIONS} conversations)`,
);
for (const r of results) {
  console.log(
    `  ${r.policy.padEnd(58)} hits ${pct(r.hitRate)} (best rank ${pct(r.bestRankHitRate)})  max/mean ${r.meanMaxOverMean.toFixed(2)} (worst ${r.worstMaxOverMean.toFixed(2)})  CV ${r.meanCv.toFixed(3)}`,
  );
}
console.log(`@@bench ${JSON.stringify(result)}`);
