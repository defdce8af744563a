/**
 * The fixture of `selection-client.test.ts`: the real Worker under wrangler's local runtime with
 * `wrangler.toml`'s vars (one replica, `REPLICAS = "primary"`), the pods the EPP registers, and
 * readers of `GET /loads` to see what a booking did.
 */
import { join } from "node:path";
import { expect } from "vitest";
import { unstable_startWorker } from "wrangler";
import type { SelectionClient } from "./client";
import { parseJson } from "./json";
import { vec } from "./serde";
import { modelLoadResponse, type PotentialLoad, type WorkerRegistration } from "./wire";

export type Worker = Awaited<ReturnType<typeof unstable_startWorker>>;

/** As `wrangler dev`, state in memory, on a free port. */
export async function startWorker(): Promise<Worker> {
  const worker = await unstable_startWorker({
    config: join(import.meta.dirname, "../../../wrangler.toml"),
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      persist: false,
      watch: false,
      logLevel: "warn",
    },
  });
  await worker.ready;
  return worker;
}

export const MODEL = "Qwen/Qwen3-0.6B";
export const BLOCK = 16;
/** Above 2^53: a `u64` that a double would round. */
export const W1 = 18446744073709551557n;
export const W2 = 9007199254740993n;
export const STALE = 7n;

/** What the EPP registers for one vLLM pod (`WorkerRegistration`, fields in declaration order). */
export const W1_REG: WorkerRegistration = {
  worker_id: W1,
  model_name: MODEL,
  endpoint: "http://10.0.0.1:8000",
  block_size: BLOCK,
  data_parallel_size: 2,
  kv_events_endpoints: { "0": "tcp://10.0.0.1:5557", "1": "tcp://10.0.0.1:5558" },
  total_kv_blocks: 1000n,
  stable_routing_id: "vllm-0",
};
export const W2_REG: WorkerRegistration = {
  worker_id: W2,
  model_name: MODEL,
  endpoint: "http://10.0.0.2:8000",
  block_size: BLOCK,
  data_parallel_size: 1,
  kv_events_endpoints: { "0": "tcp://10.0.0.2:5557" },
  replay_endpoint: "tcp://10.0.0.2:5560",
  max_num_batched_tokens: 8192n,
  stable_routing_id: "vllm-1",
};
export const STALE_REG: WorkerRegistration = {
  worker_id: STALE,
  model_name: MODEL,
  endpoint: "http://10.0.0.7:8000",
  block_size: BLOCK,
  data_parallel_size: 1,
  kv_events_endpoints: { "0": "tcp://10.0.0.7:5557" },
};

export const RANKS = [`${W1}/0`, `${W1}/1`, `${W2}/0`];
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** `n` token ids from `start`: each test prompts with its own range, so no prefix is shared by chance. */
export const tokens = (start: number, n: number) => Array.from({ length: n }, (_, i) => start + i);

/** Each rank's row of `GET /loads` for the model, keyed `worker/rank`. */
export async function loads(client: SelectionClient): Promise<Map<string, PotentialLoad>> {
  const answer = await client.get(`/loads?model_name=${encodeURIComponent(MODEL)}`);
  expect(answer.status).toBe(200);
  const partitions = vec(modelLoadResponse)(parseJson(answer.text), "GET /loads");
  const rows = partitions.flatMap((p) => p.loads);
  return new Map(rows.map((row) => [`${row.worker_id}/${row.dp_rank}`, row]));
}

export async function activeRequests(client: SelectionClient): Promise<Record<string, bigint>> {
  const rows = await loads(client);
  return Object.fromEntries(RANKS.map((rank) => [rank, rows.get(rank)?.active_requests ?? -1n]));
}

export const idle = Object.fromEntries(RANKS.map((rank) => [rank, 0n]));
