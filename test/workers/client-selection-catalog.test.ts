/**
 * The typed client's selection catalog methods against the real Worker and its objects: every
 * catalog route, ids above 2^53 exact both ways, the token and replica on the calls, and refusals
 * thrown as `SlotTrackerError` with Dynamo's status and text.
 */
import { describe, expect, it } from "vitest";
import { readExact, selectionClient, sendExact, slotTrackerClient } from "../../src/client";
import { refusal, viaWorker } from "./client-calls";

const client = () => selectionClient("http://tracker", { fetch: viaWorker });

/** Above 2^53: `Number(BIG)` would round it. */
const BIG = (1n << 64n) - 3n;
const MODEL = "client-catalog-llama";

describe("the typed client's selection catalog", () => {
  it("upserts, lists, patches and deletes a worker, its 64-bit id exact both ways", async () => {
    const sel = client();
    const incomplete = await sel.upsertWorker({ worker_id: BIG, model_name: MODEL, block_size: 16 });
    expect(incomplete).toMatchObject({ worker_id: BIG, lifecycle: "incomplete", endpoint: null });
    expect(incomplete.not_schedulable_reasons).toEqual(["endpoint is required"]);

    const record = await sel.upsertWorker({
      worker_id: BIG,
      model_name: MODEL,
      endpoint: "http://big:8000",
      block_size: 16,
      data_parallel_size: 2,
    });
    expect(record).toMatchObject({
      worker_id: BIG,
      model_name: MODEL,
      routing_group: "default",
      lifecycle: "schedulable",
      data_parallel_size: 2,
    });
    expect(record.not_schedulable_reasons).toBeUndefined();
    expect(await sel.listWorkers({ model_name: MODEL })).toEqual([record]);

    const patched = await sel.patchWorker(BIG, { data_parallel_start_rank: 2, endpoint: "http://big:9000" });
    expect(patched).toMatchObject({
      worker_id: BIG,
      lifecycle: "schedulable",
      endpoint: "http://big:9000",
      data_parallel_start_rank: 2,
      data_parallel_size: 2,
    });
    expect(await sel.listWorkers({ model_name: MODEL, routing_group: "default" })).toEqual([patched]);

    const removed = await sel.deleteWorker(BIG);
    expect(removed).toMatchObject({ worker_id: BIG, lifecycle: "unschedulable" });
    expect(await sel.listWorkers({ model_name: MODEL })).toEqual([]);
  });

  it("reads liveness, readiness whether ready or not, and the replica peers", async () => {
    const sel = client();
    expect(await sel.health()).toEqual({ status: "ok" });
    // Not ready is an answer (503 with the same body), not a refusal.
    expect(await sel.ready()).toEqual({ ready: false, schedulable_workers: 0, workers: [] });
    await sel.upsertWorker({ worker_id: 7, model_name: MODEL, endpoint: "http://w7", block_size: 16 });
    const ready = await sel.ready();
    expect(ready).toMatchObject({ ready: true, schedulable_workers: 1 });
    expect(ready.workers.map((w) => w.worker_id)).toEqual([7]);
    expect(await sel.replicaPeers()).toEqual([]);
  });

  it("throws refusals as SlotTrackerError with Dynamo's status and text", async () => {
    const sel = client();
    expect(await refusal(sel.patchWorker(BIG, { endpoint: "http://x" }))).toEqual({
      status: 404,
      message: `worker ${BIG} not found`,
    });
    expect(await refusal(sel.deleteWorker(12))).toEqual({ status: 404, message: "worker 12 not found" });
    expect(await refusal(sel.registerPeer({ endpoint: "tcp://peer:9000" }))).toEqual({
      status: 409,
      message: "replica sync is disabled",
    });
    expect(await refusal(sel.deregisterPeer({ endpoint: "tcp://peer:9000" }))).toEqual({
      status: 409,
      message: "replica sync is disabled",
    });
    const mistyped = await refusal(
      sel.upsertWorker({ worker_id: 1, model_name: MODEL, block_size: 1 << 30, data_parallel_size: -1 }),
    );
    expect(mistyped.status).toBe(422);
    expect(mistyped.message).toContain("data_parallel_size: invalid value: integer `-1`, expected u32");
  });

  it("sends its token and replica on every call, bodies with exact ids", async () => {
    const seen: { headers: Headers; body: string }[] = [];
    const recording: typeof fetch = async (input, init) => {
      seen.push({ headers: new Headers(init?.headers), body: String(init?.body ?? "") });
      return viaWorker(input, init);
    };
    const sel = selectionClient("http://tracker", {
      fetch: recording,
      token: "t0k",
      replica: "primary",
    });
    await sel.upsertWorker({ worker_id: BIG, model_name: MODEL, endpoint: "http://big", block_size: 16 });
    await sel.listWorkers();
    expect(seen).toHaveLength(2);
    for (const { headers } of seen) {
      expect(headers.get("authorization")).toBe("Bearer t0k");
      expect(headers.get("x-slot-tracker-replica")).toBe("primary");
    }
    expect(seen[0]?.headers.get("content-type")).toBe("application/json");
    expect(seen[0]?.body).toContain(`"worker_id":${BIG}`);
  });

  it("patches through the hono paths with sendExact, a u64 field above 2^53 exact", async () => {
    await client().upsertWorker({ worker_id: 3, model_name: MODEL, endpoint: "http://w3", block_size: 16 });
    const api = slotTrackerClient("http://tracker", { fetch: viaWorker }).selection;
    const blocks = (1n << 60n) + 1n;
    const res = await sendExact(
      api.workers[":worker_id"].$patch,
      { param: { worker_id: "3" } },
      { total_kv_blocks: blocks },
    );
    expect(res.status).toBe(200);
    expect(await readExact(res)).toMatchObject({ worker_id: 3, total_kv_blocks: blocks });
  });
});
