/**
 * Engine KV events in the pure core, under `node --expose-gc`: a real `Tracker` with 16 catalog
 * workers × 4 DP ranks (64 ranks) and the object's `SelectionHost` (`bench/selection/partition.ts`).
 *
 * Each size N fills a fresh tracker's event index to N cached blocks through `Tracker.kvEvents`, the
 * call the object makes for `POST /kv_events`: calls of 2 batches, each a `BlockStored` of one
 * 128-block prompt (`bench/selection/prompts.ts`: its first 64 blocks its family's), the prompt on
 * rank `i mod 64`, so ranks share family prefixes as engines of one model do. Then it times
 * `select_and_reserve` of new prompts of the same families (each booking ended before the next), one
 * `process.hrtime` sample per call, so the figure is the object's own time per call with N blocks
 * cached, every rank sourced by events. The heap figure is `heapUsed + arrayBuffers` after forced
 * collections, around the fill, per cached block.
 *
 * Prints a table and one `@@bench` JSON line.
 */
import { blockHashesWithSeed } from "../../durable-objects/core/hashing/block-hashes";
import { XXH3_SEED } from "../../durable-objects/core/hashing/block-seed";
import { tokenBytes } from "../../durable-objects/core/hashing/token-bytes";
import type { KvEventBatch } from "../../durable-objects/kv-event-types";
import type { SelectionPrompt } from "../../durable-objects/selection-types";
import {
  BLOCK_SIZE,
  type CatalogShape,
  type SelectionPartition,
  selectionPartition,
} from "../selection/partition";
import { PROMPT_BLOCKS, promptTokens } from "../selection/prompts";
import { heapBytes, percentile, machine } from "../measures";

const SHAPE: CatalogShape = { workers: 16, dpSize: 4 };
const RANKS = SHAPE.workers * SHAPE.dpSize;
const SIZES = [10_000, 1_000_000];
const TIMED = 5_000;
const WARMUP = 1_000;
const T0 = 1_700_000_000_000;

/** Prompt `i` as one engine's `BlockStored` of all its blocks, engine hashes unique per prompt. */
function storedBatch(i: number): KvEventBatch {
  const localHashes = blockHashesWithSeed(
    tokenBytes(promptTokens(i)),
    { blockSize: BLOCK_SIZE, isEagle: false, blockMmInfos: null },
    XXH3_SEED,
  );
  const engineHashes = BigUint64Array.from(
    { length: PROMPT_BLOCKS },
    (_, k) => BigInt(i) * 1_000n + BigInt(k) + 1n,
  );
  return {
    at: 0,
    dpRank: null,
    ops: [{ kind: "stored", tier: "device", blockSize: BLOCK_SIZE, engineHashes, parent: null, localHashes }],
  };
}

function fill(p: SelectionPartition, blocks: number): { calls: number; ms: number } {
  const prompts = Math.ceil(blocks / PROMPT_BLOCKS);
  const next = new Map<number, number>();
  let calls = 0;
  let busy = 0;
  for (let i = 0; i < prompts; i += 2) {
    const rank = (i / 2) % RANKS;
    const workerId = p.workerIds[Math.floor(rank / SHAPE.dpSize)]!;
    const dpRank = rank % SHAPE.dpSize;
    const batches = [storedBatch(i), storedBatch(i + 1)];
    const seq = next.get(rank) ?? 0;
    const start = process.hrtime.bigint();
    const answer = p.tracker.kvEvents({ workerId, dpRank, seq, epoch: "bench", batches }, T0 + i);
    busy += Number(process.hrtime.bigint() - start) / 1e6;
    if (!answer.ok) throw new Error(answer.message);
    next.set(rank, seq + 2);
    calls++;
  }
  return { calls, ms: busy };
}

function measure(blocks: number) {
  const before = heapBytes();
  const p = selectionPartition(SHAPE, T0, { maxCachedBlocks: Math.max(blocks, 1_024) });
  const fed = fill(p, blocks);
  const heap = heapBytes() - before;
  const stats = p.tracker.kv.index.stats();
  const samples: number[] = [];
  for (let c = 0; c < WARMUP + TIMED; c++) {
    const i = 10_000_000 + c;
    const prompt: SelectionPrompt = { kind: "tokens", tokens: { tokenIds: promptTokens(i) } };
    const now = T0 + 10_000_000 + c;
    const start = process.hrtime.bigint();
    const booked = p.host.select({ mode: "book", selectionId: `s${c}`, prompt, seed: c }, now);
    const us = Number(process.hrtime.bigint() - start) / 1e3;
    if (!booked.ok) throw new Error(booked.message);
    if (c >= WARMUP) samples.push(us);
    const ended = p.host.end(`s${c}`, now);
    if (!ended.ok) throw new Error(ended.message);
  }
  const sorted = samples.sort((a, b) => a - b);
  return {
    cachedBlocks: stats.entries,
    nodes: stats.blocks,
    evicted: stats.evicted,
    p50Us: percentile(sorted, 0.5),
    p99Us: percentile(sorted, 0.99),
    heapBytes: heap,
    heapBytesPerCachedBlock: heap / stats.entries,
    fill: { calls: fed.calls, blocksPerSec: (stats.entries / fed.ms) * 1000 },
  };
}

measure(20_000);
const runs = SIZES.map((n) => {
  const run = measure(n);
  process.stderr.write(`kv-events-core: N=${n} done\n`);
  return run;
});
const [small, large] = [runs[0]!, runs.at(-1)!];
const result = {
  environment: machine(),
  ranks: RANKS,
  promptBlocks: PROMPT_BLOCKS,
  timed: TIMED,
  runs,
  p50Ratio: large.p50Us / small.p50Us,
  heapBytesPerCachedBlock: large.heapBytesPerCachedBlock,
};
console.log(
  `kv events, core (64 ranks, 128-block prompts; load ${result.environment.loadAverage.join(" ")})`,
);
for (const r of runs) {
  console.log(
    `  ${String(r.cachedBlocks).padStart(9)} cached blocks: select_and_reserve p50 ${r.p50Us.toFixed(1)} µs, p99 ${r.p99Us.toFixed(1)} µs; ` +
      `${r.heapBytesPerCachedBlock.toFixed(1)} B/block; fill ${Math.round(r.fill.blocksPerSec)} blocks/s`,
  );
}
console.log(`  p50 ratio ${result.p50Ratio.toFixed(2)}× (target ≤ 2×)`);
process.stdout.write(`@@bench ${JSON.stringify(result)}\n`);
