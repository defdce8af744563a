/**
 * What hashing a prompt costs (`durable-objects/core/hashing/`), beside floors measured in the same run:
 * a 16,384-token prompt (64 KiB of token bytes) hashed as a request handler does — number[] tokens to
 * public block and sequence hashes, and the keyed tracking hashes too — at block sizes 16 and 64; and
 * raw XXH3-64 over the 64 KiB. The floors: reading the tokens into bytes (the work every hashing of
 * them starts with), Node's native SHA-1 and hash-wasm's WASM XXH3 over the same bytes (neither runs in
 * workerd; they show what native and WASM code do on this machine at this moment).
 *
 * Subjects take turns, one operation each per round, so a burst of load on a shared machine falls on
 * all of them alike; each figure is the median of its rounds. Prints a table and one JSON line.
 */
import { createHash } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { createXXHash3 } from "hash-wasm";
import { hashPrompt } from "../../durable-objects/core/hashing/prompt-hashes";
import { tokenBytes } from "../../durable-objects/core/hashing/token-bytes";
import { PUBLIC_TRACKING, type TrackingHash } from "../../durable-objects/core/hashing/tracking-config";
import { xxh3Hash } from "../../durable-objects/core/hashing/xxh3";
import { seededRng } from "../../durable-objects/core/routing/rng";

const TOKENS = 16_384;
const WARMUP_ROUNDS = 300;
const ROUNDS = 400;
const BYTES = 4 * TOKENS;

const rng = seededRng(20261201);
/** Token ids as a JSON body parses them: numbers below a large vocabulary's size. */
const tokenIds = Array.from({ length: TOKENS }, () => Math.floor(rng() * 200_000));
const tokenWords = Uint32Array.from(tokenIds);
const bytes = new Uint8Array(tokenWords.buffer);
const KEYED: TrackingHash = {
  algorithm: "keyed-xxh3-v1",
  keyId: "2026-01",
  key: new Uint8Array(32).fill(0x5a),
};
const wasmXxh3 = await createXXHash3(1337, 0);

function prompt(blockSize: number, tracking: TrackingHash): () => unknown {
  const partition = { modelName: "model", routingGroup: "default", blockSize, isEagle: false };
  const options = { tracking, assumeKvReuse: true, rng };
  return () => hashPrompt({ tokenIds }, partition, options);
}

interface Subject {
  name: string;
  run: () => unknown;
  /** Bytes it hashes, for a MB/s figure. */
  bytes?: number;
}

const subjects: Subject[] = [
  { name: "prompt, bs 16, public", run: prompt(16, PUBLIC_TRACKING) },
  { name: "prompt, bs 16, keyed", run: prompt(16, KEYED) },
  { name: "prompt, bs 64, public", run: prompt(64, PUBLIC_TRACKING) },
  { name: "prompt, bs 64, keyed", run: prompt(64, KEYED) },
  { name: "xxh3-64, 64 KiB", run: () => xxh3Hash(bytes, 1337n), bytes: BYTES },
  { name: "floor: tokens to bytes", run: () => tokenBytes(tokenIds) },
  { name: "floor: native sha1, 64 KiB", run: () => createHash("sha1").update(bytes).digest(), bytes: BYTES },
  {
    name: "floor: WASM xxh3, 64 KiB",
    run: () => wasmXxh3.init().update(bytes).digest("binary"),
    bytes: BYTES,
  },
];

const samples = subjects.map(() => [] as number[]);
for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
  for (const [i, subject] of subjects.entries()) {
    const start = process.hrtime.bigint();
    subject.run();
    const ns = Number(process.hrtime.bigint() - start);
    if (round >= WARMUP_ROUNDS) samples[i]!.push(ns);
  }
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
}

const rows = subjects.map((subject, i) => {
  const us = median(samples[i]!) / 1000;
  return {
    name: subject.name,
    medianUs: Math.round(us * 10) / 10,
    mbPerS: subject.bytes ? Math.round(subject.bytes / us) : undefined,
  };
});
const environment = {
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "unknown",
  loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
};

console.log(
  `hashing a ${TOKENS.toLocaleString("en")}-token prompt (median of ${ROUNDS} rounds; load ${environment.loadAverage.join(" ")})`,
);
for (const row of rows) {
  const rate = row.mbPerS === undefined ? "" : `${String(row.mbPerS).padStart(7)} MB/s`;
  console.log(`  ${row.name.padEnd(28)} ${row.medianUs.toFixed(1).padStart(9)} µs ${rate}`);
}
console.log(`@@bench ${JSON.stringify({ environment, tokens: TOKENS, rows })}`);
