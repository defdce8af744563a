/**
 * What the approximate cache index costs (`durable-objects/core/cache-index/`), beside the tracker's
 * own add/free cycle measured in the same process: run under `node --expose-gc`.
 *
 * - Recording a 128-block booking, CPU µs: new prompts at the default cap (`MAX_CACHE_INDEX_ENTRIES`,
 *   where the tracker runs once busy: each booking evicts about as many entries as it adds), with
 *   every prompt distinct and with 16 families of 64-block shared prefixes; and the renewal of a
 *   prompt already indexed on its rank (1,000 bookings held, each recorded again later).
 * - The floor: the core benchmark's add+prefill+free cycle (`bench/core`, 1,000 live requests, 64
 *   ranks, 64-block prompts) of our Tracker, whose index records each add's prompt, and of the same
 *   Tracker with an index that records nothing: their difference is what the index adds to a cycle.
 * - A 128-block overlap query, median µs, over 1,000 and 50,000 recorded bookings (uncapped).
 * - Bytes per (block, rank) entry after full collections, `heapUsed + arrayBuffers` (the index keeps
 *   nearly everything in typed arrays, which V8 counts in `arrayBuffers`), and the index's own estimate.
 *
 * Bookings spread over 8 workers × 8 dp ranks. Timed subjects take turns, one round each, so a burst
 * of load on a shared machine falls on all of them alike; each figure is the median of its rounds.
 * Prints a table and one `@@bench` JSON line.
 */
import { ApproximateIndex } from "../../durable-objects/core/cache-index/approximate-index";
import type { CacheIndex, PromptBlocks } from "../../durable-objects/core/cache-index/cache-index";
import { MAX_CACHE_INDEX_ENTRIES } from "../../durable-objects/limits";
import { NoIndex, withIndex } from "../core/no-index";
import { ours } from "../core/rates";
import { OurSubject } from "../core/subjects";
import { fill, materialize, run, T0 } from "../core/workload";
import { heapBytes, machine } from "../measures";

const BLOCKS = 128;
const RANKS = 64;
const RANKS_PER_WORKER = 8;
const FAMILIES = 16;
const SHARED_PREFIX = 64;
const CYCLE_LIVE = 1_000;
const ROUNDS = 15;
const WARMUP_ROUNDS = 3;
const BOOKINGS_PER_ROUND = 200;
const CYCLES_PER_ROUND = 500;
const RENEWAL_BOOKINGS = 1_000;
const QUERY_BOOKINGS = [1_000, 50_000];
const WARMUP_QUERIES = 2_000;
const QUERIES = 5_000;
const MEMORY_ENTRIES = [10_000, 100_000, 1_000_000];

/** A well-mixed u32 of (a, b, salt): murmur3's finaliser. */
function word(a: number, b: number, salt: number): number {
  let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b) ^ salt;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Booking `b`'s prompt: its family's first `shared` blocks, then blocks of its own. */
function promptOf(b: number, shared: number): PromptBlocks {
  const prompt = { localHashes: new BigUint64Array(BLOCKS), sequenceHashes: new BigUint64Array(BLOCKS) };
  const local = new Uint32Array(prompt.localHashes.buffer);
  const seq = new Uint32Array(prompt.sequenceHashes.buffer);
  for (let i = 0; i < BLOCKS; i++) {
    const owner = i < shared ? -1 - (b % FAMILIES) : b;
    local[2 * i] = word(owner, i, 1);
    local[2 * i + 1] = word(owner, i, 2);
    seq[2 * i] = word(owner, i, 3);
    seq[2 * i + 1] = word(owner, i, 4);
  }
  return prompt;
}

const WORKERS = Array.from({ length: RANKS / RANKS_PER_WORKER }, (_, w) => BigInt(w + 1) << 40n);

function record(index: CacheIndex, b: number, prompt: PromptBlocks, at: number): void {
  const rank = b % RANKS;
  index.recordBooking(WORKERS[Math.floor(rank / RANKS_PER_WORKER)]!, rank % RANKS_PER_WORKER, prompt, at);
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
}

function cpuUs(start: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(start);
  return user + system;
}

/** A timed subject: one round of work, CPU µs per operation. */
interface Timed {
  name: string;
  round(): number;
}

/** New bookings into an index filled to the default cap, prompts built before each round. */
function atCap(name: string, shared: number): Timed {
  const index = new ApproximateIndex({ maxEntries: MAX_CACHE_INDEX_ENTRIES, keyOnLocal: false });
  let b = 0;
  while (index.stats().evicted === 0) record(index, b, promptOf(b, shared), T0 + b++);
  return {
    name,
    round() {
      const prompts = Array.from({ length: BOOKINGS_PER_ROUND }, (_, k) => promptOf(b + k, shared));
      const start = process.cpuUsage();
      for (const p of prompts) record(index, b, p, T0 + b++);
      return cpuUs(start) / BOOKINGS_PER_ROUND;
    },
  };
}

/** The same bookings recorded again, each later than the last: every block is renewed, none added. */
function renewal(): Timed {
  const index = new ApproximateIndex({ maxEntries: MAX_CACHE_INDEX_ENTRIES, keyOnLocal: false });
  const prompts = Array.from({ length: RENEWAL_BOOKINGS }, (_, b) => promptOf(b, 0));
  let at = T0;
  for (const [b, p] of prompts.entries()) record(index, b, p, at++);
  let b = 0;
  return {
    name: "record, renewal",
    round() {
      const start = process.cpuUsage();
      for (let k = 0; k < BOOKINGS_PER_ROUND; k++, b = (b + 1) % RENEWAL_BOOKINGS) {
        record(index, b, prompts[b]!, at++);
      }
      if (index.stats().entries !== RENEWAL_BOOKINGS * BLOCKS) throw new Error("a renewal added entries");
      return cpuUs(start) / BOOKINGS_PER_ROUND;
    },
  };
}

/** The core benchmark's cycle at `CYCLE_LIVE` live requests; `index` replaces the tracker's if given. */
function cycle(name: string, index?: CacheIndex): Timed {
  const subject = new OurSubject(T0);
  if (index) withIndex(subject.tracker, index);
  fill(subject, CYCLE_LIVE, ours);
  let next = CYCLE_LIVE;
  return {
    name,
    round() {
      const batch = materialize(next, next + CYCLES_PER_ROUND, CYCLE_LIVE, ours);
      next += CYCLES_PER_ROUND;
      const start = process.cpuUsage();
      run(subject, batch);
      return cpuUs(start) / CYCLES_PER_ROUND;
    },
  };
}

/** Median µs of one 128-block overlap query over `bookings` recorded bookings of distinct prompts. */
function queryUs(bookings: number): number {
  const index = new ApproximateIndex({ maxEntries: bookings * BLOCKS, keyOnLocal: false });
  for (let b = 0; b < bookings; b++) record(index, b, promptOf(b, 0), T0 + b);
  const queries = Array.from({ length: 64 }, (_, q) => promptOf(word(q, bookings, 5) % bookings, 0));
  let rows = 0;
  for (let k = 0; k < WARMUP_QUERIES; k++) rows += index.overlap(queries[k % queries.length]!, T0).length;
  const samples: number[] = [];
  for (let k = 0; k < QUERIES; k++) {
    const q = queries[word(k, 0, 6) % queries.length]!;
    const start = process.hrtime.bigint();
    rows += index.overlap(q, T0).length;
    samples.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  if (rows !== WARMUP_QUERIES + QUERIES) throw new Error("a query missed its booking");
  return median(samples);
}

/** Heap in use after full collections, counting typed-array backing stores (`arrayBuffers`). */

/** Bytes per entry of an index filled to `entries` entries (one prompt buffer reused). */
function bytesPerEntry(entries: number, shared: number) {
  const prompts = Array.from({ length: FAMILIES * 4 }, (_, b) => promptOf(b, shared));
  const before = heapBytes();
  const index = new ApproximateIndex({ maxEntries: entries, keyOnLocal: false });
  for (let b = 0; index.stats().entries < entries; b++) {
    // Fresh tails for every booking: the prompt's own blocks are rewritten in place.
    const p = prompts[b % prompts.length]!;
    const seq = new Uint32Array(p.sequenceHashes.buffer);
    for (let i = shared; i < BLOCKS; i++) {
      seq[2 * i] = word(b, i, 3);
      seq[2 * i + 1] = word(b, i, 4);
    }
    record(index, b, { localHashes: p.sequenceHashes, sequenceHashes: p.sequenceHashes }, T0 + b);
  }
  const after = heapBytes();
  // Read after the heap: the index is alive through the reading.
  const stats = index.stats();
  const measured = (after - before) / stats.entries;
  return {
    entries: stats.entries,
    blocks: stats.blocks,
    measured,
    estimate: stats.memoryBytes / stats.entries,
  };
}

// Memory first, before any other part of the run has left garbage or freed buffers behind.
const memory = {
  distinct: MEMORY_ENTRIES.map((n) => bytesPerEntry(n, 0)),
  sharedPrefix: MEMORY_ENTRIES.map((n) => bytesPerEntry(n, SHARED_PREFIX)),
};
const subjects: Timed[] = [
  atCap("record, new, distinct, at cap", 0),
  atCap("record, new, shared prefix, at cap", SHARED_PREFIX),
  renewal(),
  cycle("floor: tracker add/free cycle"),
  cycle("floor: same cycle, index records nothing", new NoIndex()),
];
const samples = subjects.map(() => [] as number[]);
for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
  for (const [i, subject] of subjects.entries()) {
    const us = subject.round();
    if (round >= WARMUP_ROUNDS) samples[i]!.push(us);
  }
}
const timed = subjects.map((s, i) => ({ name: s.name, medianUs: Math.round(median(samples[i]!) * 10) / 10 }));
const us = (name: string) => timed.find((t) => t.name === name)!.medianUs;
const query = QUERY_BOOKINGS.map((bookings) => ({ bookings, medianUs: queryUs(bookings) }));
const result = {
  environment: machine(),
  maxEntries: MAX_CACHE_INDEX_ENTRIES,
  blocksPerBooking: BLOCKS,
  cycleLive: CYCLE_LIVE,
  timed,
  recordNewUs: us("record, new, distinct, at cap"),
  recordNewSharedUs: us("record, new, shared prefix, at cap"),
  recordRenewalUs: us("record, renewal"),
  cycleUs: us("floor: tracker add/free cycle"),
  cycleWithoutIndexUs: us("floor: same cycle, index records nothing"),
  query,
  queryRatio: query[1]!.medianUs / query[0]!.medianUs,
  memory,
};

const f = (x: number, d = 1) => x.toFixed(d).padStart(9);
console.log(`cache index (medians of ${ROUNDS} rounds; load ${result.environment.loadAverage.join(" ")})`);
for (const t of timed) console.log(`  ${t.name.padEnd(42)} ${f(t.medianUs)} µs CPU per booking or cycle`);
for (const q of query)
  console.log(`  query, ${String(q.bookings).padStart(6)} bookings ${f(q.medianUs, 2)} µs`);
console.log(`  query ratio ${QUERY_BOOKINGS[1]} / ${QUERY_BOOKINGS[0]}: ${result.queryRatio.toFixed(2)}`);
for (const [name, rows] of Object.entries(memory)) {
  for (const r of rows) {
    console.log(
      `  bytes/entry, ${name}, ${String(r.entries).padStart(9)} entries ${f(r.measured)} (estimate ${r.estimate.toFixed(1)})`,
    );
  }
}
console.log(`@@bench ${JSON.stringify(result)}`);
