/**
 * What the engine-event cache index costs (`durable-objects/core/cache-index/event-index.ts`); run
 * under `node --expose-gc` (`events.mjs` bundles and starts it).
 *
 * Workload: 64 ranks (8 workers × 8 dp ranks); each prompt is 128 blocks stored as one BlockStored
 * run from the root on one rank: the first 64 blocks are one of 16 shared prefixes (the same tokens
 * and engine hashes on every rank that has them), the other 64 the prompt's own. So prefixes are
 * shared partly: every rank soon holds most of the 16 prefixes once, and the tails, most of the
 * entries, are on one rank each.
 *
 * - Bytes per (block, rank) entry after full collections, `heapUsed + arrayBuffers` (the index is
 *   typed arrays, which V8 counts in `arrayBuffers`), at 100,000 and 1,000,000 entries: with the cap
 *   at that count (where a busy index stays: its arrays end at the cap) and with a cap four times
 *   higher (the arrays where growth by half left them). Beside it the index's own estimate.
 * - A 128-block overlap query, median µs, at 10,000 and 1,000,000 entries (a stored prompt: a full
 *   hit on its rank, 64 blocks on the ranks holding its prefix).
 * - `holdingsOf` over every rank at 1,000,000 entries, ms; rebuilding a fresh index from those runs, ms.
 * - Storing a new 128-block prompt at the cap (each evicts about as many entries), median µs.
 *
 * Prints a table and one `@@bench` JSON line.
 */
import { EventIndex, type KvHeldRun } from "../../durable-objects/core/cache-index/event-index";
import type { KvStoredOp } from "../../durable-objects/kv-event-types";
import { sequenceHashes } from "../../durable-objects/core/hashing/sequence-hashes";
import { MAX_CACHED_BLOCKS } from "../../durable-objects/limits";
import { heapBytes, machine } from "../measures";

const BLOCKS = 128;
const SHARED = 64;
const FAMILIES = 16;
const RANKS_PER_WORKER = 8;
const WORKERS = Array.from({ length: 8 }, (_, w) => (BigInt(w + 1) << 40n) | 0xabcn);
const T0 = 1_700_000_000_000;
const QUERIES = 5_000;
const WARMUP_QUERIES = 2_000;
const CAP_STORES = 2_000;

/** A well-mixed u32 of (a, b, salt): murmur3's finaliser. */
function word(a: number, b: number, salt: number): number {
  let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b) ^ salt;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Prompt `p`'s run: its family's prefix, then blocks of its own; `op` is reused, rewritten in place. */
function promptRun(p: number, op: KvStoredOp): KvStoredOp {
  const engine = new Uint32Array(op.engineHashes.buffer);
  const local = new Uint32Array(op.localHashes.buffer);
  const family = word(p, 0, 8) % FAMILIES;
  for (let i = 0; i < BLOCKS; i++) {
    const owner = i < SHARED ? -1 - family : p;
    engine[2 * i] = word(owner, i, 1);
    engine[2 * i + 1] = word(owner, i, 2);
    local[2 * i] = word(owner, i, 3);
    local[2 * i + 1] = word(owner, i, 4);
  }
  return op;
}

function newOp(): KvStoredOp {
  return {
    kind: "stored",
    tier: "device",
    blockSize: 16,
    engineHashes: new BigUint64Array(BLOCKS),
    parent: null,
    localHashes: new BigUint64Array(BLOCKS),
  };
}

function rankOf(p: number): { workerId: bigint; dpRank: number } {
  const r = word(p, 0, 7) % (WORKERS.length * RANKS_PER_WORKER);
  return { workerId: WORKERS[Math.floor(r / RANKS_PER_WORKER)]!, dpRank: r % RANKS_PER_WORKER };
}

/** Stores prompts 0, 1, … until the index holds `entries`; returns how many prompts it took. */
function fill(index: EventIndex, entries: number, op = newOp()): number {
  let p = 0;
  for (; index.stats().entries < entries; p++) {
    const { workerId, dpRank } = rankOf(p);
    index.applyStored(workerId, dpRank, promptRun(p, op), T0 + p);
  }
  return p;
}

function bytesPerEntry(entries: number, capFactor: number) {
  const op = newOp();
  const before = heapBytes();
  const index = new EventIndex({ maxEntries: entries * capFactor });
  fill(index, entries, op);
  const after = heapBytes();
  const stats = index.stats();
  return {
    entries: stats.entries,
    blocks: stats.blocks,
    cap: entries * capFactor,
    measured: (after - before) / stats.entries,
    estimate: stats.memoryBytes / stats.entries,
  };
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
}

function queryUs(entries: number) {
  const index = new EventIndex({ maxEntries: entries });
  const prompts = fill(index, entries);
  const chosen = Array.from(
    { length: 64 },
    (_, q) => prompts - 1 - (word(q, entries, 5) % Math.min(prompts, 1_000)),
  );
  const queries = chosen.map((p) => {
    const run = promptRun(p, newOp());
    // The walk looks blocks up by their public sequence hashes, the chain of the local ones.
    return { localHashes: run.localHashes, sequenceHashes: sequenceHashes(run.localHashes) };
  });
  let deepest = 0;
  for (let k = 0; k < WARMUP_QUERIES; k++) index.overlap(queries[k % queries.length]!, T0);
  const samples: number[] = [];
  for (let k = 0; k < QUERIES; k++) {
    const q = queries[word(k, 0, 6) % queries.length]!;
    const start = process.hrtime.bigint();
    const rows = index.overlap(q, T0);
    samples.push(Number(process.hrtime.bigint() - start) / 1e3);
    for (const row of rows) deepest = Math.max(deepest, row.deviceBlocks);
  }
  if (deepest !== BLOCKS) throw new Error("no query matched its whole prompt");
  return { entries: index.stats().entries, medianUs: median(samples) };
}

function holdingsAndRebuild(entries: number) {
  const index = new EventIndex({ maxEntries: entries });
  fill(index, entries);
  const ranks = index.ranksHeld();
  let start = process.hrtime.bigint();
  const runs: Array<{ workerId: bigint; dpRank: number; run: KvHeldRun }> = [];
  for (const { workerId, dpRank } of ranks) {
    for (const run of index.holdingsOf(workerId, dpRank)) runs.push({ workerId, dpRank, run });
  }
  const holdingsMs = Number(process.hrtime.bigint() - start) / 1e6;
  const rebuilt = new EventIndex({ maxEntries: entries });
  start = process.hrtime.bigint();
  for (const { workerId, dpRank, run } of runs) {
    rebuilt.applyStored(workerId, dpRank, { kind: "stored", blockSize: 16, ...run }, run.at);
  }
  const rebuildMs = Number(process.hrtime.bigint() - start) / 1e6;
  const a = index.stats();
  const b = rebuilt.stats();
  if (a.entries !== b.entries || a.blocks !== b.blocks || b.evicted !== 0) throw new Error("rebuild differs");
  return { entries: a.entries, runs: runs.length, holdingsMs, rebuildMs };
}

function storeAtCapUs(cap: number): number {
  const index = new EventIndex({ maxEntries: cap });
  let p = fill(index, cap);
  const op = newOp();
  const samples: number[] = [];
  for (let k = 0; k < CAP_STORES; k++, p++) {
    const { workerId, dpRank } = rankOf(p);
    promptRun(p, op);
    const start = process.hrtime.bigint();
    index.applyStored(workerId, dpRank, op, T0 + p);
    samples.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  if (index.stats().evicted === 0) throw new Error("the cap evicted nothing");
  return median(samples);
}

// Memory first, before other parts leave garbage or freed buffers behind.
const memory = [
  bytesPerEntry(100_000, 1),
  bytesPerEntry(1_000_000, 1),
  bytesPerEntry(100_000, 4),
  bytesPerEntry(1_000_000, 4),
];
const query = [queryUs(10_000), queryUs(1_000_000)];
const holdings = holdingsAndRebuild(1_000_000);
const storeUs = storeAtCapUs(MAX_CACHED_BLOCKS);
const result = {
  environment: machine(),
  blocksPerPrompt: BLOCKS,
  sharedPrefix: SHARED,
  families: FAMILIES,
  ranks: WORKERS.length * RANKS_PER_WORKER,
  memory,
  query,
  queryRatio: query[1]!.medianUs / query[0]!.medianUs,
  holdings,
  maxCachedBlocks: MAX_CACHED_BLOCKS,
  storeAtCapUs: storeUs,
};

const f = (x: number, d = 1) => x.toFixed(d).padStart(9);
console.log(`event cache index (load ${result.environment.loadAverage.join(" ")})`);
for (const m of memory) {
  console.log(
    `  bytes/entry, ${String(m.entries).padStart(9)} entries (${m.blocks} nodes), cap ${String(m.cap).padStart(9)} ${f(m.measured)} (estimate ${m.estimate.toFixed(1)})`,
  );
}
for (const q of query)
  console.log(`  overlap, 128 blocks, ${String(q.entries).padStart(9)} entries ${f(q.medianUs, 2)} µs p50`);
console.log(`  overlap ratio 1M / 10k: ${result.queryRatio.toFixed(2)}`);
console.log(
  `  holdingsOf, all ranks, ${holdings.entries} entries, ${holdings.runs} runs ${f(holdings.holdingsMs)} ms`,
);
console.log(`  rebuild from those runs ${f(holdings.rebuildMs)} ms`);
console.log(`  store a new 128-block prompt at the cap (${MAX_CACHED_BLOCKS}) ${f(storeUs)} µs p50`);
console.log(`@@bench ${JSON.stringify(result)}`);
