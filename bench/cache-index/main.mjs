#!/usr/bin/env node
/**
 * The approximate cache index's memory per entry and overlap-query time, in one process:
 * `node --expose-gc bench/cache-index/main.mjs`. The TypeScript core is bundled with esbuild first,
 * as `bench/run.mjs` does (Node 20 cannot strip types). Bookings spread over 64 ranks (8 workers × 8
 * dp ranks) with 128-block prompts, in two workloads: every prompt distinct (a block per entry: the
 * worst case for memory) and 16 families of 64-block shared prefixes with distinct tails (the prefix's
 * blocks shared by the ranks, and renewed rather than added on a rank that holds them). Queries are
 * 128-block prompts continuing a random recorded booking. Memory is read after full collections, as
 * `heapUsed` and as `heapUsed + arrayBuffers`: the index keeps nearly everything in typed arrays,
 * whose storage V8 counts in `arrayBuffers`, not in the heap, so the second is its cost (the first
 * shows only that nothing grows per entry on the JS heap). Recording is timed in CPU time (the
 * bench machine may be shared): filling the index, then at its cap, where each booking evicts the
 * oldest one's entries, as TTL expiry does in steady state. Prints a table and one JSON line;
 * medians are from one run.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const out = join(root, "node_modules/.cache/slot-tracker-bench");
await build({
  entryPoints: { "cache-index": "durable-objects/core/cache-index/approximate-index.ts" },
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outdir: out,
  outExtension: { ".js": ".mjs" },
  logLevel: "warning",
});
const { ApproximateIndex } = await import(pathToFileURL(join(out, "cache-index.mjs")).href);

const gc = globalThis.gc;
if (!gc) throw new Error("run with node --expose-gc");

const T0 = 1_700_000_000_000;
const BLOCKS = 128;
const RANKS = 64;
const RANKS_PER_WORKER = 8;
const FAMILIES = 16;
const SHARED_PREFIX = 64;
const MEMORY_ENTRIES = [10_000, 100_000, 1_000_000];
const QUERY_BOOKINGS = [1_000, 50_000];
const WARMUP_QUERIES = 2_000;
const QUERIES = 5_000;
const AT_CAP_BOOKINGS = 2_000;
const WORKLOADS = { distinct: 0, "shared prefix": SHARED_PREFIX };

/** A well-mixed u32 of (a, b, salt): murmur3's finaliser. */
function word(a, b, salt) {
  let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b) ^ salt;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Writes booking `b`'s prompt: its family's first `shared` blocks, then blocks of its own. */
function writePrompt(b, shared, prompt) {
  const local = new Uint32Array(prompt.localHashes.buffer);
  const seq = new Uint32Array(prompt.sequenceHashes.buffer);
  for (let i = 0; i < BLOCKS; i++) {
    const owner = i < shared ? -1 - (b % FAMILIES) : b;
    local[2 * i] = word(owner, i, 1);
    local[2 * i + 1] = word(owner, i, 2);
    seq[2 * i] = word(owner, i, 3);
    seq[2 * i + 1] = word(owner, i, 4);
  }
}

function newPrompt() {
  return { localHashes: new BigUint64Array(BLOCKS), sequenceHashes: new BigUint64Array(BLOCKS) };
}

function record(index, b, shared, prompt) {
  writePrompt(b, shared, prompt);
  const rank = b % RANKS;
  index.recordBooking(
    BigInt(1 + Math.floor(rank / RANKS_PER_WORKER)),
    rank % RANKS_PER_WORKER,
    prompt,
    T0 + b,
  );
}

/** Heap in use after full collections: JS objects, and typed-array backing stores (`arrayBuffers`). */
function heap() {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heapUsed, arrayBuffers };
}

function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Bytes per entry of an index filled to `entries` (the fill's input is one reused prompt buffer). */
function memoryOf(entries, shared) {
  const prompt = newPrompt();
  const before = heap();
  const index = new ApproximateIndex({ maxEntries: entries });
  for (let b = 0; index.stats().entries < entries; b++) record(index, b, shared, prompt);
  const after = heap();
  const stats = index.stats();
  return {
    entries: stats.entries,
    blocks: stats.blocks,
    heapUsedPerEntry: (after.heapUsed - before.heapUsed) / stats.entries,
    totalPerEntry:
      (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / stats.entries,
    estimatePerEntry: stats.memoryBytes / stats.entries,
  };
}

/** A small deterministic generator for choosing bookings to continue. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    return word(s, 0, 5) / 2 ** 32;
  };
}

/** CPU µs (user + system) since `start`, a `process.cpuUsage()` reading. */
function cpuUsSince(start) {
  const { user, system } = process.cpuUsage(start);
  return user + system;
}

/** Median µs of one 128-block overlap query over an index of `bookings` recorded bookings. */
function queryTimeOf(bookings, shared) {
  const index = new ApproximateIndex({ maxEntries: bookings * BLOCKS });
  const prompt = newPrompt();
  const fillStart = process.cpuUsage();
  for (let b = 0; b < bookings; b++) record(index, b, shared, prompt);
  const fillUs = cpuUsSince(fillStart);
  const draw = rng(bookings);
  const queries = Array.from({ length: 64 }, () => {
    const q = newPrompt();
    writePrompt(Math.floor(draw() * bookings), shared, q);
    return q;
  });
  let rows = 0;
  for (let k = 0; k < WARMUP_QUERIES; k++) rows += index.overlap(queries[k % queries.length], T0).length;
  const samples = [];
  for (let k = 0; k < QUERIES; k++) {
    const q = queries[Math.floor(draw() * queries.length)];
    const start = process.hrtime.bigint();
    rows += index.overlap(q, T0).length;
    samples.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  return {
    bookings,
    entries: index.stats().entries,
    medianQueryUs: median(samples),
    rowsPerQuery: rows / (WARMUP_QUERIES + QUERIES),
    fillCpuUsPerBooking: fillUs / bookings,
    ...atCap(bookings, shared, index.stats().entries),
  };
}

/**
 * CPU µs per booking recorded into an index capped at the `entries` that `bookings` bookings fill it
 * with, once full: each booking then evicts about one booking's entries.
 */
function atCap(bookings, shared, entries) {
  const index = new ApproximateIndex({ maxEntries: entries });
  const prompt = newPrompt();
  for (let b = 0; b < bookings; b++) record(index, b, shared, prompt);
  const start = process.cpuUsage();
  for (let b = bookings; b < bookings + AT_CAP_BOOKINGS; b++) record(index, b, shared, prompt);
  return {
    atCapCpuUsPerBooking: cpuUsSince(start) / AT_CAP_BOOKINGS,
    evictedPerBookingAtCap: index.stats().evicted / AT_CAP_BOOKINGS,
  };
}

const result = { memory: {}, query: {} };
for (const [name, shared] of Object.entries(WORKLOADS)) {
  result.memory[name] = MEMORY_ENTRIES.map((n) => memoryOf(n, shared));
  result.query[name] = QUERY_BOOKINGS.map((n) => queryTimeOf(n, shared));
}

const f = (x, d = 1) => x.toFixed(d).padStart(8);
for (const [name, rows] of Object.entries(result.memory)) {
  console.log(
    `memory, ${name}: entries, blocks, bytes/entry (heapUsed | heapUsed + arrayBuffers | estimate)`,
  );
  for (const r of rows) {
    console.log(
      `  ${String(r.entries).padStart(9)} ${String(r.blocks).padStart(9)} ${f(r.heapUsedPerEntry)} ${f(r.totalPerEntry)} ${f(r.estimatePerEntry)}`,
    );
  }
}
for (const [name, rows] of Object.entries(result.query)) {
  console.log(
    `query, ${name}: bookings, entries, median query µs, rows/query, record CPU µs/booking (filling | at cap), evicted/booking at cap`,
  );
  for (const r of rows) {
    console.log(
      `  ${String(r.bookings).padStart(9)} ${String(r.entries).padStart(9)} ${f(r.medianQueryUs, 2)} ${f(r.rowsPerQuery)} ${f(r.fillCpuUsPerBooking)} ${f(r.atCapCpuUsPerBooking)} ${f(r.evictedPerBookingAtCap)}`,
    );
  }
  console.log(
    `  ratio ${QUERY_BOOKINGS[1]} / ${QUERY_BOOKINGS[0]}: ${(rows[1].medianQueryUs / rows[0].medianQueryUs).toFixed(2)}×`,
  );
}
console.log(JSON.stringify(result));
