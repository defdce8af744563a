/**
 * The Worker's listing routes against fake objects: `/workers` and `/loads` ask one tracker or fan out
 * over the directory and sort by UTF-8 bytes, worker and rank; `/potential_loads` answers sorted
 * snake_case rows.
 */
import { describe, expect, it } from "vitest";
import { trackerName } from "../../durable-objects/naming";
import app from "../../src/app";
import { fakeEnv, json } from "./route-fake-env";

describe("listings", () => {
  it("GET /workers with model and tenant asks that one tracker", async () => {
    const { env, calls } = fakeEnv({
      listWorkers: async () => [{ workerId: 9007199254740993n, blockSize: 16, dpStart: 0, dpSize: 1 }],
    });
    const res = await app.request("/workers?model_name=m&routing_group=t", {}, env);
    expect(await res.text()).toBe(
      '[{"worker_id":9007199254740993,"model_name":"m","tenant_id":"t","block_size":16,"dp_start":0,"dp_size":1}]',
    );
    expect(calls.map((c) => c.object)).toEqual([
      trackerName({ replica: "primary", model: "m", tenant: "t" }),
    ]);
  });

  it("GET /loads without filters fans out over the directory and sorts by UTF-8 bytes, worker, rank", async () => {
    // "\u{1F600}" sorts after "\uFFFD" in UTF-8 although its UTF-16 units sort before.
    const trackers = [
      { model: "\u{1F600}", tenant: "default" },
      { model: "\uFFFD", tenant: "default" },
      { model: "a", tenant: "z" },
      { model: "a", tenant: "b" },
    ];
    const { env, calls } = fakeEnv(
      {
        listLoads: async () => [
          { workerId: 2n, dpRank: 0, activePrefillTokens: 1, activeDecodeBlocks: 2 },
          { workerId: 1n, dpRank: 1, activePrefillTokens: 0, activeDecodeBlocks: 0 },
          { workerId: 1n, dpRank: 0, activePrefillTokens: 0, activeDecodeBlocks: 0 },
        ],
      },
      { listTrackers: async () => trackers },
    );
    const res = await app.request("/loads", {}, env);
    const rows = (await res.json()) as {
      model_name: string;
      tenant_id: string;
      worker_id: number;
      dp_rank: number;
    }[];
    expect(rows.map((r) => `${r.model_name}/${r.tenant_id}/${r.worker_id}/${r.dp_rank}`)).toEqual([
      "a/b/1/0",
      "a/b/1/1",
      "a/b/2/0",
      "a/z/1/0",
      "a/z/1/1",
      "a/z/2/0",
      "\uFFFD/default/1/0",
      "\uFFFD/default/1/1",
      "\uFFFD/default/2/0",
      "\u{1F600}/default/1/0",
      "\u{1F600}/default/1/1",
      "\u{1F600}/default/2/0",
    ]);
    expect(Object.keys(rows[0] ?? {})).toEqual([
      "model_name",
      "tenant_id",
      "worker_id",
      "dp_rank",
      "active_prefill_tokens",
      "active_decode_blocks",
    ]);
    expect(calls.filter((c) => c.method === "listLoads")).toHaveLength(4);
  });

  it("GET /workers with only a tenant filters the directory's trackers by tenant", async () => {
    const { env, calls } = fakeEnv(
      { listWorkers: async () => [] },
      {
        listTrackers: async () => [
          { model: "a", tenant: "t" },
          { model: "b", tenant: "u" },
        ],
      },
    );
    const res = await app.request("/workers?tenant_id=t", {}, env);
    expect(await res.json()).toEqual([]);
    expect(calls.filter((c) => c.method === "listWorkers").map((c) => c.object)).toEqual([
      trackerName({ replica: "primary", model: "a", tenant: "t" }),
    ]);
    expect(calls.find((c) => c.method === "listTrackers")?.args).toEqual([]);
  });

  it("POST /potential_loads answers snake_case rows sorted by worker and rank", async () => {
    const { env } = fakeEnv({
      potentialLoads: async () => ({
        ok: true,
        loads: [
          {
            workerId: 18446744073709551615n,
            dpRank: 0,
            potentialPrefillTokens: 5,
            potentialDecodeBlocks: 1,
            activeRequests: 0,
          },
          {
            workerId: 1n,
            dpRank: 1,
            potentialPrefillTokens: 13,
            potentialDecodeBlocks: 4,
            activeRequests: 1,
          },
          { workerId: 1n, dpRank: 0, potentialPrefillTokens: 5, potentialDecodeBlocks: 1, activeRequests: 0 },
        ],
      }),
    });
    const res = await app.request(
      "/potential_loads",
      json({ model_name: "m", sequence_hashes: [1, 2, 4], new_isl_tokens: 5 }),
      env,
    );
    expect(await res.text()).toBe(
      "[" +
        '{"worker_id":1,"dp_rank":0,"potential_prefill_tokens":5,"potential_decode_blocks":1,"active_requests":0},' +
        '{"worker_id":1,"dp_rank":1,"potential_prefill_tokens":13,"potential_decode_blocks":4,"active_requests":1},' +
        '{"worker_id":18446744073709551615,"dp_rank":0,"potential_prefill_tokens":5,"potential_decode_blocks":1,"active_requests":0}' +
        "]",
    );
  });
});
