/**
 * The tracker object's own time per `/selection/select_and_reserve`, in Node on the pure core: a
 * real `Tracker` with 16 schedulable catalog workers × 4 DP ranks (64 ranks) and the object's
 * `SelectionHost`, as `partition.ts` builds them. Run under `node --expose-gc`.
 *
 * Each prompt is 2,048 `token_ids` (128 blocks of 16), hashed by the host as the object hashes a
 * request's tokens: its first 64 blocks are its family's (1,000 families), the other 64 its own.
 * A *cycle* at N live bookings ends the booking made N cycles earlier (`DELETE
 * /selection/reservations/{id}`), completes the prefill of the one made N/2 earlier, and books a new
 * one; only the booking is timed, one `process.hrtime` sample per call, so the p99 includes what the
 * object meets at that size (garbage collection too). Freeing first keeps the book at N when the
 * booking lands, so the tracker's default `MAX_LIVE_REQUESTS` (50,000) is the one in force.
 *
 * Each size runs on a fresh tracker, alone in the process (the heap of one size does not slow the
 * other's collections), under two cache-index caps: the deployed default, where the index is full at
 * both sizes and each booking evicts about what it adds, and one that holds every booking recorded
 * within `DYN_ROUTER_TTL_SECS`, so that the index grows with the book. The heap figure is
 * `heapUsed + arrayBuffers` after forced collections, around filling a fresh tracker to N.
 *
 * Prints a table and one `@@bench` JSON line.
 */
import type { Tracker } from "../../durable-objects/core/tracker";
import { MAX_CACHE_INDEX_ENTRIES, MAX_LIVE_REQUESTS } from "../../durable-objects/limits";
import type { SelectionPrompt } from "../../durable-objects/selection-types";
import { BLOCK_SIZE, type CatalogShape, type SelectionPartition, selectionPartition } from "./partition";
import { FAMILIES, PROMPT_BLOCKS, promptTokens, SHARED_BLOCKS } from "./prompts";
import { heapBytes, percentile, machine } from "../measures";

const SHAPE: CatalogShape = { workers: 16, dpSize: 4 };
const SIZES = [1_000, 50_000];
/** Bookings arrive 1 ms apart: 50,000 live bookings span 50 s, inside the 300 s request expiry. */
const STEP_MS = 1;
const WARMUP_CYCLES = 3_000;
const TIMED_CYCLES = 10_000;
const CHUNK = 1_000;
const T0 = 1_700_000_000_000;
/**
 * `MAX_LIVE_BLOCKS` as a deployment of 128-block prompts sets it to let `MAX_LIVE_REQUESTS` live:
 * the default (1,500,000 summed blocks) admits 11,718 of them.
 */
const LIVE_BLOCKS = MAX_LIVE_REQUESTS * PROMPT_BLOCKS;

interface IndexCap {
  name: string;
  maxCacheEntries: number;
}

const CAPS: IndexCap[] = [
  { name: "default cap", maxCacheEntries: MAX_CACHE_INDEX_ENTRIES },
  // Every booking of the largest run within the TTL, each of its blocks on its own rank.
  {
    name: "holds every booking",
    maxCacheEntries: (SIZES.at(-1)! + WARMUP_CYCLES + TIMED_CYCLES) * PROMPT_BLOCKS,
  },
];

/** Booking `i`'s prompt as the Worker hands it to the object. */
function promptOf(i: number): SelectionPrompt {
  return { kind: "tokens", tokens: { tokenIds: promptTokens(i) } };
}

const idOf = (i: number) => `sel-${i}`;
const at = (i: number) => T0 + i * STEP_MS;

function book(p: SelectionPartition, i: number, prompt: SelectionPrompt): void {
  const booked = p.host.select({ mode: "book", selectionId: idOf(i), prompt, seed: i }, at(i));
  if (!booked.ok) throw new Error(`booking ${i}: ${booked.message}`);
}

/** The steps before booking `i` in a book of `live`: an end and a prefill completion, as due. */
function retire(p: SelectionPartition, i: number, live: number): void {
  if (i >= live) {
    const ended = p.host.end(idOf(i - live), at(i));
    if (!ended.ok) throw new Error(ended.message);
  }
  const half = live >> 1;
  if (i >= half) {
    const done = p.host.prefillComplete(idOf(i - half), at(i));
    if (!done.ok) throw new Error(done.message);
  }
}

/** Cycles `from ..< to`; returns each booking's µs when `timed`. */
function cycles(p: SelectionPartition, from: number, to: number, live: number, samples?: number[]): void {
  for (let c = from; c < to; c += CHUNK) {
    const end = Math.min(to, c + CHUNK);
    const prompts = Array.from({ length: end - c }, (_, k) => promptOf(c + k));
    for (let i = c; i < end; i++) {
      retire(p, i, live);
      const prompt = prompts[i - c]!;
      if (!samples) {
        book(p, i, prompt);
        continue;
      }
      const start = process.hrtime.bigint();
      book(p, i, prompt);
      samples.push(Number(process.hrtime.bigint() - start) / 1e3);
    }
  }
}

function checkBook(tracker: Tracker, live: number): void {
  if (tracker.liveRequests !== live)
    throw new Error(`book drifted: ${tracker.liveRequests} live, not ${live}`);
}

function measure(live: number, cap: IndexCap) {
  const before = heapBytes();
  const p = selectionPartition(SHAPE, at(0), {
    maxLiveBlocks: LIVE_BLOCKS,
    maxCacheEntries: cap.maxCacheEntries,
  });
  cycles(p, 0, live, live);
  const heap = heapBytes() - before;
  checkBook(p.tracker, live);
  const filled = p.tracker.cache.stats();
  cycles(p, live, live + WARMUP_CYCLES, live);
  const samples: number[] = [];
  cycles(p, live + WARMUP_CYCLES, live + WARMUP_CYCLES + TIMED_CYCLES, live, samples);
  checkBook(p.tracker, live);
  const index = p.tracker.cache.stats();
  const sorted = samples.sort((a, b) => a - b);
  return {
    live,
    cap: cap.name,
    maxCacheEntries: cap.maxCacheEntries,
    p50Us: percentile(sorted, 0.5),
    p99Us: percentile(sorted, 0.99),
    meanUs: samples.reduce((s, x) => s + x, 0) / samples.length,
    samples: samples.length,
    heapBytes: heap,
    heapBytesPerBookedBlock: heap / (live * PROMPT_BLOCKS),
    indexAfterFill: { entries: filled.entries, blocks: filled.blocks, memoryBytes: filled.memoryBytes },
    indexAtEnd: { entries: index.entries, evicted: index.evicted, expired: index.expired },
  };
}

// A throwaway pass compiles every path first, so that JIT code is not counted as tracker heap.
measure(2_000, CAPS[0]!);
const runs: ReturnType<typeof measure>[] = [];
for (const cap of CAPS) {
  for (const live of SIZES) {
    runs.push(measure(live, cap));
    process.stderr.write(`selection-core: ${cap.name}, N=${live} done\n`);
  }
}
const ratios = CAPS.map((cap) => {
  const of = (live: number) => runs.find((r) => r.cap === cap.name && r.live === live)!;
  const [small, large] = [of(SIZES[0]!), of(SIZES.at(-1)!)];
  return { cap: cap.name, p50Ratio: large.p50Us / small.p50Us, p99Ratio: large.p99Us / small.p99Us };
});
/**
 * Heap per (block, rank) entry of the cache index at the largest size: the two caps' trackers hold
 * the same book, so the difference of their heaps is the difference of their indexes.
 */
const largest = (cap: IndexCap) => runs.find((r) => r.cap === cap.name && r.live === SIZES.at(-1))!;
const [capped, whole] = [largest(CAPS[0]!), largest(CAPS[1]!)];
const indexBytesPerEntry =
  (whole.heapBytes - capped.heapBytes) / (whole.indexAfterFill.entries - capped.indexAfterFill.entries);
const result = {
  environment: machine(),
  ranks: SHAPE.workers * SHAPE.dpSize,
  catalog: SHAPE,
  promptBlocks: PROMPT_BLOCKS,
  promptTokens: PROMPT_BLOCKS * BLOCK_SIZE,
  sharedBlocks: SHARED_BLOCKS,
  families: FAMILIES,
  maxLiveRequests: MAX_LIVE_REQUESTS,
  maxLiveBlocks: LIVE_BLOCKS,
  warmupCycles: WARMUP_CYCLES,
  timedCycles: TIMED_CYCLES,
  runs,
  ratios,
  indexBytesPerEntry,
};

const f = (x: number, d = 1) => x.toFixed(d).padStart(9);
console.log(
  `selection core (64 ranks, 128-block token prompts; load ${result.environment.loadAverage.join(" ")})`,
);
for (const r of runs) {
  console.log(
    `  ${r.cap.padEnd(20)} N=${String(r.live).padStart(6)}  p50 ${f(r.p50Us)} µs  p99 ${f(r.p99Us)} µs  heap ${f(r.heapBytesPerBookedBlock)} B/booked block  index ${r.indexAfterFill.entries} entries`,
  );
}
for (const r of ratios)
  console.log(`  ${r.cap}: p50 ratio ${r.p50Ratio.toFixed(2)}, p99 ratio ${r.p99Ratio.toFixed(2)}`);
console.log(
  `  cache index heap per (block, rank) entry at N=${SIZES.at(-1)}: ${indexBytesPerEntry.toFixed(1)} B`,
);
console.log(`@@bench ${JSON.stringify(result)}`);
